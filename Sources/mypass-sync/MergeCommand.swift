internal import MyPassCore
internal import MyPassSync

/// `mypass-sync merge LOCAL REMOTE... [--base FILE] [-o OUT] [--dry-run] [--explain] [--json] [--exit-code]`.
struct MergeCommand: Command {
    let name = "merge"
    let summary = "Three-way merge other copies of a vault into it, field by field, losing nothing."
    let usage = "mypass-sync merge <local> <remote>... [--base <file>] [-o <out>] [--dry-run] [--explain] [--json] [--exit-code] [credentials]"
    let arguments = """
          <local>                 The vault to merge into (its format and credentials are kept).
          <remote>...             Other copies: another device's file, sync-conflict copies.
        """
    let notes = """
        Entries and groups are matched by UUID; each field takes the side that changed it since the
        common version; when both changed a field, the newer edit is current and the other version is
        kept in the entry's history. Deletions apply only with a tombstone or a recycle-bin move newer
        than the other side's edits. The result is verified by opening it again before it replaces
        anything; a remote that the credentials do not open (key changed elsewhere) stops the merge.
        --explain (and "explanation" in --json) shows, for every property the two differed on, its
        state in the ancestor, locally and remotely, the side taken and the rule that decided;
        protected values appear only as a fingerprint salted for this merge.
        """
    let base = Option<String>("--base", valueName: "file", help: "The version both copies last shared (else each entry's ancestor is inferred from history).")
    let outputPath = Option<String>("--output", "-o", valueName: "out", help: "Write the merged vault here instead of replacing <local>.")
    let dryRun = Flag("--dry-run", help: "Write nothing; print what would change.")
    let explain = Flag("--explain", help: "Show how each differing property was decided (states, side taken, rule).")
    let json = Flag("--json", help: "Print one JSON document (schema 1) instead of text.")
    let exitCode = Flag("--exit-code", help: "Exit 1 when the merge changes something.")
    let credentials = CredentialOptions()
    let otherCredentials = OtherCredentialOptions()
    let stateOptions = StateOptions()
    let backupOptions = BackupOptions()

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        let parsed = try parse(arguments, count: 2...Int.max)
        let localPath = parsed.positionals[0]
        let file = try credentials.read(parsed, path: localPath)
        let localCredentials = try credentials.credentials(parsed, for: localPath, command: name)
        var request = FileMerge.Request(copies: Array(parsed.positionals.dropFirst()), state: try stateOptions.state(parsed),
                                        settings: try DeviceSettings.load())
        request.copyCredentials = try otherCredentials.credentials(parsed, for: request.copies[0], command: name)
        // `--base=` with nothing after it (Unison's empty CURRENTARCHOPT): no base.
        request.basePath = parsed[base].flatMap { $0.isEmpty ? nil : $0 }
        request.outputPath = parsed[outputPath]
        request.dryRun = parsed[dryRun]
        request.keepsBackup = parsed[backupOptions.backup]
        let line = credentials.progress(parsed)
        request.progress = { line.show($0.description) }
        let report = try FileMerge.run(request, on: file, credentials: localCredentials)
        line.clear()
        for warning in report.warnings { output.printError("warning: \(warning)") }
        output.print(parsed[json] ? try JSONText.encode(report) : ReportText.merge(report, local: localPath, explained: parsed[explain]))
        return parsed[exitCode] && report.hasChanges ? .differences : .success
    }
}

internal import Foundation
internal import MyPassCore
internal import MyPassSync

/// `mypass-sync status VAULT [--json]`: no password needed.
struct StatusCommand: Command {
    let name = "status"
    let summary = "Has the vault changed on disk since this device last synced it? Conflict copies? Base known?"
    let usage = "mypass-sync status <vault> [--json] [--state-dir <dir>]"
    let json = Flag("--json", help: "Print one JSON document (schema 1).")
    let stateOptions = StateOptions()

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        let parsed = try parse(arguments, count: 1...1)
        let path = parsed.positionals[0]
        let report = try VaultStatus(of: path, state: stateOptions.state(parsed), naming: DeviceSettings.load().copyNaming)
        let changed = report.changedSinceLastSync
        if parsed[json] {
            output.print(try JSONText.encode(report))
        } else {
            var lines = ["vault: \(path.terminalSafe)"]
            switch changed {
            case nil: lines.append("state: never synced on this device (no base: a merge will infer its ancestors)")
            case true?: lines.append("state: changed on disk since this device last synced it")
            case false?: lines.append("state: unchanged since this device last synced it")
            }
            lines.append(report.conflictCopies.isEmpty ? "conflict copies: none"
                         : "conflict copies:\n" + report.conflictCopies.map { "  \($0.path.terminalSafe) (\($0.engine.rawValue))" }.joined(separator: "\n"))
            lines.append("quick unlock: " + (report.quickUnlockUntil.map { "on until \(QuickUnlockText.time($0))" } ?? "off"))
            output.print(lines.joined(separator: "\n"))
        }
        return .success
    }
}

/// `mypass-sync resolve VAULT --working FILE (--reload | --overwrite | --merge) [--json]`.
struct ResolveCommand: Command {
    let name = "resolve"
    let summary = "Decide a save conflict, or a version the watcher refused or asks about: reload, overwrite, or merge."
    let usage = "mypass-sync resolve <vault> [--working <file>] (--reload | --overwrite | --merge) [--json] [credentials]"
    let notes = """
        With --working: WORKING holds this device's unsaved edits and the vault changed on disk since.
        Without it: the version on disk that `watch` refused (a rollback to an older version, another database) or asks
        about (--policy ask), against this device's synced version. For a rollback --merge puts this device's newer
        values back into it, --reload takes it as it is, --overwrite writes this device's version over it; another
        database is taken (--reload) or replaced (--overwrite), never merged. What --reload drops of this device's
        for a refused version is kept on this device with the merged copies (`conflicts VAULT --merged`; the newest
        50, up to 90 days). Run it while no watcher of the vault runs (a daemon's vault: `daemon decide`).
        """
    let working = Option<String>("--working", valueName: "file", help: "A vault file holding this device's unsaved edits.")
    let reload = Flag("--reload", help: "Take the disk version; this device's version is kept (the working copy as a backup in the state directory).")
    let overwrite = Flag("--overwrite", help: "Write this device's version (the working copy, or the one it last synced); the disk version is kept as a backup.")
    let merge = Flag("--merge", help: "Merge this device's version into the disk's (three-way against the version this device last synced), then write.")
    let json = Flag("--json", help: "Print one JSON document (schema 1).")
    let credentials = CredentialOptions()
    let stateOptions = StateOptions()

    struct Report: Encodable {
        let schema = 1
        let decision: String
        let changes: [Change]
        let warnings: [String]
        let backup: String?
        /// Whether the vault file was replaced (false: the outcome was already its content).
        let wroteFile: Bool
        /// What was done, in one line (a decision for the watcher).
        var summary: String?
    }

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        let parsed = try parse(arguments, count: 1...1)
        let chosen: [(Flag, SyncSession.Decision)] = [(reload, .reload), (overwrite, .overwrite), (merge, .merge)]
        let decisions = chosen.filter { parsed[$0.0] }.map(\.1)
        guard decisions.count == 1, let decision = decisions.first else {
            throw CommandLineError.usage(message: "choose exactly one of --reload, --overwrite, --merge", command: name)
        }
        guard let workingPath = parsed[working] else {
            return try decideForWatcher(decision, parsed: parsed, output: &output)
        }
        let path = parsed.positionals[0]
        let workingCopy = try credentials.unlock(parsed, path: workingPath, command: name)
        let session = try workingCopy.resumingSession(on: path, state: stateOptions.state(parsed), settings: DeviceSettings.load())
        let resolution = try session.resolveDiskChange(by: decision)
        let report = Report(decision: decision.rawValue, changes: resolution.changes, warnings: resolution.warnings + session.warnings,
                            backup: resolution.backup, wroteFile: resolution.wroteFile)
        if parsed[json] {
            output.print(try JSONText.encode(report))
        } else {
            var lines = ["\(decision.rawValue): \(path)"]
            lines += resolution.changes.map { "  " + ReportText.line($0) }
            lines += report.warnings.map { "  warning: \($0)" }
            if let backup = resolution.backup { lines.append("backup: \(backup)") }
            if decision != .reload && !resolution.wroteFile { lines.append("unchanged: the vault already held this content; not written") }
            output.print(lines.joined(separator: "\n"))
        }
        return .success
    }

    /// The decision on the version the watcher refused or asks about (`WatcherDecision`): one check of
    /// a watch engine given the decision, as a running watch carries one out.
    private func decideForWatcher(_ decision: SyncSession.Decision, parsed: ParsedArguments, output: inout StandardStreams) throws -> ExitCode {
        let path = parsed.positionals[0]
        let file = try credentials.read(parsed, path: path)
        let vaultCredentials = try credentials.credentials(parsed, for: file.path, command: name)
        let settings = WatchEngine.Settings(device: try DeviceSettings.load())
        let engine = WatchEngine(vaults: [file.path], credentials: vaultCredentials, limits: file.limits, state: try stateOptions.state(parsed),
                                 settings: settings, source: nil) { _ in }
        let outcome = try engine.decideOnce(decision, about: nil).get()
        if parsed[json] {
            output.print(try JSONText.encode(Report(decision: decision.rawValue, changes: outcome.changes, warnings: [], backup: outcome.backup,
                                                    wroteFile: outcome.wroteFile, summary: outcome.summary)))
        } else {
            output.print((["\(decision.rawValue): \(path): \(outcome.summary)"] + outcome.changes.map { "  " + ReportText.line($0) })
                .joined(separator: "\n"))
        }
        return .success
    }
}

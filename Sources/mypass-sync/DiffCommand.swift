internal import MyPassCore
internal import MyPassSync

/// `mypass-sync diff A B [--base FILE] [--explain] [--json] [--exit-code]`.
struct DiffCommand: Command {
    let name = "diff"
    let summary = "Show what differs between two vaults, per object and field (names, never values)."
    let usage = "mypass-sync diff <a> <b> [--base <file>] [--explain] [--json] [--exit-code] [credentials]"
    let arguments = "  <a> <b>                 The vaults to compare (changes that turn <a> into <b>)."
    let base = Option<String>("--base", valueName: "file", help: "The common version: fields changed on both sides are shown as conflicts.")
    let explain = Flag("--explain", help: "Per differing property: its states (protected values as fingerprints) and how a merge of <b> into <a> would decide it.")
    let json = Flag("--json", help: "Print one JSON document (schema 1) instead of text.")
    let exitCode = Flag("--exit-code", help: "Exit 1 when the vaults differ.")
    let credentials = CredentialOptions()
    let otherCredentials = OtherCredentialOptions()

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        let parsed = try parse(arguments, count: 2...2)
        let first = try credentials.unlock(parsed, path: parsed.positionals[0], command: name)
        let second = try first.openCopy(atPath: parsed.positionals[1],
                                        with: otherCredentials.credentials(parsed, for: parsed.positionals[1], command: name))
        let baseVault = try parsed[base].map { try first.openCopy(atPath: $0).vault }
        let changes = VaultComparison.changes(from: first.vault, to: second.vault, base: baseVault)
        let explanation = parsed[explain] ? try VaultComparison.explanation(from: first.vault, to: second.vault, base: baseVault) : nil
        if parsed[json] {
            output.print(try JSONText.encode(DiffReport(changes: changes, explanation: explanation)))
        } else {
            output.print(changes.isEmpty ? "no differences" : changes.map(ReportText.line).joined(separator: "\n"))
            if let explanation {
                output.print("explanation (\(explanation.count) decision(s)):")
                for decision in explanation { output.print("  " + ReportText.decision(decision)) }
            }
        }
        return parsed[exitCode] && !changes.isEmpty ? .differences : .success
    }
}

/// What `diff --json` prints.
struct DiffReport: Encodable {
    let schema = 1
    let changes: [Change]
    /// With --explain.
    let explanation: [FieldDecision]?
}

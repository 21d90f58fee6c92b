internal import Foundation
internal import MyPassCore
internal import MyPassSync

/// `mypass-sync journal VAULT [--show ID] [--limit N] [--json]`: the merges that wrote the vault on this device.
struct JournalCommand: Command {
    let name = "journal"
    let summary = "List the merges that wrote a vault on this device (no password); --show explains one."
    let usage = "mypass-sync journal <vault> [--show <id>] [--limit <n>] [--json] [--state-dir <dir>] [credentials with --show]"
    let notes = """
        Every merge that writes (merge, conflicts --merge, the watcher, resolve --merge, sync, and an entry command \
        that merged a change made meanwhile) is journaled in the state directory: its id, time, kind, inputs (names and \
        SHA-256), counts per rule, and the vault before and after, all encrypted with the vault's key. The newest \
        \(MergeJournal.maximumCount) records per vault are kept, none older than \(Int(MergeJournal.maximumAge / 86_400)) days. \
        --show ID opens the record's explanation with the password: each decision with its states and rule, as merge \
        --explain prints it. `undo VAULT ID` takes a merge back.
        """
    let show = Option<String>("--show", valueName: "id", help: "Show how this merge decided each property (needs the password).")
    let limit = Option<Int>.number("--limit", valueName: "n", help: "List only the newest N records.", in: 1...1_000)
    let json = Flag("--json", help: "Print one JSON document (schema 1).")
    let credentials = CredentialOptions()
    let stateOptions = StateOptions()

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        let parsed = try parse(arguments, count: 1...1)
        let path = parsed.positionals[0]
        _ = try VaultFile.format(at: path, on: CommandFileSystem.current)  // a vault that is not there (or not a vault) is said, not listed as empty
        let journal = MergeJournal(state: try stateOptions.state(parsed), vaultPath: path)
        if let id = parsed[show] {
            let unlocked = try credentials.unlock(parsed, path: path, command: name)
            let explanation = try journal.explanation(of: id, unlocked: unlocked)
            if parsed[json] {
                output.print(try JSONText.encode(JournalExplanation(record: journal.record(id), explanation: explanation)))
            } else {
                output.print("merge \(id): \(explanation.count) decision(s)")
                for decision in explanation { output.print("  " + ReportText.decision(decision)) }
            }
            return .success
        }
        let records = Array(journal.records().prefix(parsed[limit] ?? Int.max))
        if parsed[json] {
            output.print(try JSONText.encode(JournalListing(records: records)))
        } else if records.isEmpty {
            output.print("no merges journaled for \(path.terminalSafe) on this device")
        } else {
            for record in records {
                let inputs = record.inputs.map(\.name.terminalSafe).joined(separator: ", ")
                let rules = record.rules.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
                output.print("\(record.id)  \(ISO8601DateFormatter().string(from: record.time))  \(record.kind.rawValue)  \(inputs)")
                output.print("  \(record.changes) change(s), \(record.decisions) decision(s)" + (rules.isEmpty ? "" : ": \(rules)"))
            }
        }
        return .success
    }
}

/// `journal --json`.
private struct JournalListing: Encodable {
    let schema = 1
    let records: [MergeJournal.Record]
}

/// `journal --show ID --json`.
private struct JournalExplanation: Encodable {
    let schema = 1
    let record: MergeJournal.Record?
    let explanation: [FieldDecision]
}

/// `mypass-sync undo VAULT ID [--dry-run] [--json]`: one merge taken back as a new edit.
struct UndoCommand: Command {
    let name = "undo"
    let summary = "Take one journaled merge back as a new edit (what was edited since stays)."
    let usage = "mypass-sync undo <vault> <id> [--dry-run] [--json] [credentials]"
    let notes = """
        Every property the merge changed gets its value from before the merge again (the merged value goes to the \
        entry's history), objects it deleted come back, objects it added go, moves are moved back — but whatever was \
        edited again since that merge is left as it is and reported. The result is saved like any edit (compare-and-swap; \
        a change made meanwhile is merged in), so it reaches the other devices as a newer edit, not a rollback. Ids: \
        `journal VAULT`.
        """
    let dryRun = Flag("--dry-run", help: "Show what would be taken back; write nothing.")
    let json = Flag("--json", help: "Print one JSON document (schema 1).")
    let credentials = CredentialOptions()
    let stateOptions = StateOptions()

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        let parsed = try parse(arguments, count: 2...2)
        let path = parsed.positionals[0]
        let state = try stateOptions.state(parsed)
        let journal = MergeJournal(state: state, vaultPath: path)
        guard journal.record(parsed.positionals[1]) != nil else { throw JournalError.noSuchRecord(parsed.positionals[1]) }
        let unlocked = try credentials.unlock(parsed, path: path, command: name)
        let report = try MergeUndo.run(parsed.positionals[1], journal: journal, unlocked: unlocked, state: state,
                                       settings: DeviceSettings.load(), dryRun: parsed[dryRun])
        if parsed[json] {
            output.print(try JSONText.encode(report))
        } else {
            output.print(report.reverted.isEmpty ? "nothing to take back" : "taken back:")
            for change in report.reverted { output.print("  " + ReportText.line(change)) }
            if !report.keptEditedSince.isEmpty {
                output.print("left as it is (changed again since the merge):")
                for change in report.keptEditedSince { output.print("  " + ReportText.line(change)) }
            }
            output.print(report.dryRun ? "dry run: nothing written" : report.written ? "wrote \(path.terminalSafe)" : "unchanged: nothing written")
        }
        return .success
    }
}

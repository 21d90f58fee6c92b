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
    let summary = "Decide a save conflict: reload the disk version, overwrite it, or merge."
    let usage = "mypass-sync resolve <vault> --working <file> (--reload | --overwrite | --merge) [--json] [credentials]"
    let working = Option<String>("--working", valueName: "file", help: "A vault file holding this device's unsaved edits.")
    let reload = Flag("--reload", help: "Take the disk version; the working copy is kept as a backup (in the state directory).")
    let overwrite = Flag("--overwrite", help: "Write the working copy; the disk version is kept as a backup.")
    let merge = Flag("--merge", help: "Three-way merge against the version this device last synced, then write.")
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
    }

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        let parsed = try parse(arguments, count: 1...1)
        guard let workingPath = parsed[working] else {
            throw CommandLineError.usage(message: "resolve takes one vault and --working <file>", command: name)
        }
        let chosen: [(Flag, SyncSession.Decision)] = [(reload, .reload), (overwrite, .overwrite), (merge, .merge)]
        let decisions = chosen.filter { parsed[$0.0] }.map(\.1)
        guard decisions.count == 1, let decision = decisions.first else {
            throw CommandLineError.usage(message: "choose exactly one of --reload, --overwrite, --merge", command: name)
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
}

internal import Foundation
internal import KDBXFormat
internal import MyPassCore
internal import MyPassMerge
internal import MyPassSync

/// `mypass-sync status VAULT [--json]`: no password needed.
struct StatusCommand: Command {
    let name = "status"
    let summary = "Has the vault changed on disk since this device last synced it? Conflict copies? Base known?"
    let usage = "mypass-sync status <vault> [--json] [--state-dir <dir>]"
    let options: [OptionSpec] = [.flag("--json", help: "Print one JSON document (schema 1)."), SessionOptions.stateOption]
    var details: String { options.helpSection }

    struct Report: Encodable {
        let schema = 1
        let vault: String
        let baseKnown: Bool
        let changedSinceLastSync: Bool?
        let conflictCopies: [ConflictCopies.Copy]
        /// Until when `unlock` keeps the vault's key (nil: not unlocked).
        let quickUnlockUntil: Date?
    }

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        let parsed = try ParsedArguments.parse(arguments, options: options, command: name)
        guard parsed.positionals.count == 1 else { throw CommandLineError.usage(message: "status takes one vault", command: name) }
        let path = parsed.positionals[0]
        guard let current = try DurableFile.fingerprint(atPath: path) else { throw FileError.notFound(path: path) }
        let record = SessionOptions.state(parsed).base(for: path)?.record
        let changed = record.map { !($0.fingerprint.sameContent(as: current)) }
        let report = Report(vault: path, baseKnown: record != nil, changedSinceLastSync: changed,
                            conflictCopies: ConflictCopies.find(for: path),
                            quickUnlockUntil: QuickUnlock().expiry(path: path))
        if parsed.flag("json") {
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
    let options: [OptionSpec] = [
        .value("--working", valueName: "file", help: "A vault file holding this device's unsaved edits."),
        .flag("--reload", help: "Take the disk version; the working copy is kept as a backup (in the state directory)."),
        .flag("--overwrite", help: "Write the working copy; the disk version is kept as a backup."),
        .flag("--merge", help: "Three-way merge against the version this device last synced, then write."),
        .flag("--json", help: "Print one JSON document (schema 1)."),
    ] + Credentials.options + [SessionOptions.stateOption]
    var details: String { options.helpSection }

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
        let parsed = try ParsedArguments.parse(arguments, options: options, command: name)
        guard parsed.positionals.count == 1, let workingPath = parsed.value("working") else {
            throw CommandLineError.usage(message: "resolve takes one vault and --working <file>", command: name)
        }
        let decisions = SyncSession.Decision.allCases.filter { parsed.flag($0.rawValue) }
        guard decisions.count == 1, let decision = decisions.first else {
            throw CommandLineError.usage(message: "choose exactly one of --reload, --overwrite, --merge", command: name)
        }
        let working = try Credentials.openVault(parsed, path: workingPath, command: name)
        let path = parsed.positionals[0]
        let session = try SyncSession(path: path, working: working.opened, key: working.key, state: SessionOptions.state(parsed),
                                      limits: working.limits)
        session.rotatesKDFSalt = try DeviceSettings.load().rotateKDFSalt
        let resolution: SyncSession.Resolution
        if let conflict = try session.diskChange() {
            resolution = try session.resolve(conflict, by: decision)
        } else {
            // Nothing changed on disk: reload keeps the disk version; the others write the working copy.
            let wrote = try decision != .reload && session.saveMerging().wroteFile
            resolution = SyncSession.Resolution(decision: decision, changes: [], warnings: ["the vault had not changed on disk"], backup: nil,
                                                wroteFile: wrote)
        }
        let report = Report(decision: decision.rawValue, changes: resolution.changes, warnings: resolution.warnings + session.warnings,
                            backup: resolution.backup, wroteFile: resolution.wroteFile)
        if parsed.flag("json") {
            output.print(try JSONText.encode(report))
        } else {
            var lines = ["\(decision.rawValue): \(path)"]
            lines += resolution.changes.map { "  " + ChangeText.line($0) }
            lines += report.warnings.map { "  warning: \($0)" }
            if let backup = resolution.backup { lines.append("backup: \(backup)") }
            if decision != .reload && !resolution.wroteFile { lines.append("unchanged: the vault already held this content; not written") }
            output.print(lines.joined(separator: "\n"))
        }
        return .success
    }
}

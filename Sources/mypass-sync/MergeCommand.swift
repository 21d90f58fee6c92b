internal import Foundation
internal import KDBXFormat
internal import MyPassCore
internal import MyPassMerge
internal import MyPassSync

/// `mypass-sync merge LOCAL REMOTE... [--base FILE] [-o OUT] [--dry-run] [--json] [--exit-code]`.
struct MergeCommand: Command {
    let name = "merge"
    let summary = "Three-way merge other copies of a vault into it, field by field, losing nothing."
    let usage = "mypass-sync merge <local> <remote>... [--base <file>] [-o <out>] [--dry-run] [--json] [--exit-code] [credentials]"
    let options: [OptionSpec] = [
        .value("--base", valueName: "file", help: "The version both copies last shared (else each entry's ancestor is inferred from history)."),
        .value("--output", "-o", valueName: "out", help: "Write the merged vault here instead of replacing <local>."),
        .flag("--dry-run", help: "Write nothing; print what would change."),
        .flag("--json", help: "Print one JSON document (schema 1) instead of text."),
        .flag("--exit-code", help: "Exit 1 when the merge changes something."),
    ] + Credentials.options + Credentials.remoteOptions + [SessionOptions.stateOption, SessionOptions.backupOption]
    var details: String {
        """
        ARGUMENTS:
          <local>                 The vault to merge into (its format and credentials are kept).
          <remote>...             Other copies: another device's file, sync-conflict copies.

        \(options.helpSection)

        Entries and groups are matched by UUID; each field takes the side that changed it since the
        common version; when both changed a field, the newer edit is current and the other version is
        kept in the entry's history. Deletions apply only with a tombstone or a recycle-bin move newer
        than the other side's edits. The result is verified by opening it again before it replaces
        anything; a remote that the credentials do not open (key changed elsewhere) stops the merge.
        """
    }

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        let parsed = try ParsedArguments.parse(arguments, options: options, command: name)
        guard parsed.positionals.count >= 2 else {
            throw CommandLineError.usage(message: "merge needs a local vault and at least one remote", command: name)
        }
        let localPath = parsed.positionals[0]
        let remotePaths = Array(parsed.positionals.dropFirst())
        // LOCAL and the remotes are decrypted and parsed in parallel, one per core.
        let (unlocked, remoteKey, remotes) = try Credentials.openWithOthers(parsed, path: localPath, others: remotePaths, command: name)
        let state = SessionOptions.state(parsed)
        // The base: --base, else the version this device last synced, else inferred per entry.
        var base: Vault?
        if let basePath = parsed.value("base") {
            base = try Credentials.openOther(path: basePath, key: unlocked.key, cachedKey: unlocked.opened.derivedKey, limits: unlocked.limits).vault
        } else if let (_, bytes) = state.base(for: localPath) {
            base = try? KDBXReader.open(bytes, key: unlocked.key, cachedKey: unlocked.opened.derivedKey, limits: unlocked.limits).vault
        }
        var vault = unlocked.opened.vault
        var report = MergeReport()
        /// A remote whose master key changed after the local one's, opened with its own credentials:
        /// the result is written with that key and format (MERGE.md rule 13).
        var rotated: OpenedVault?
        let remoteCredentialsGiven = parsed.flag("remote-password-stdin") || parsed.value("remote-key-file") != nil
        for (path, opened) in zip(remotePaths, remotes) {
            let remote: OpenedVault
            switch opened {
            case .success(let value): remote = value
            case .failure(.wrongCredentials): throw MergeRefusal.keyRotated(path)
            case .failure(let error): throw error
            }
            let result = try VaultMerger.merge(base: base, local: vault, remote: remote.vault)
            report.sections.append(.init(remote: path, changes: result.changes, warnings: result.warnings))
            vault = result.vault
            let remoteKeyChanged = remote.vault.meta.masterKeyChanged ?? .init(secondsSinceYearOne: 0)
            let localKeyChanged = (rotated?.vault ?? unlocked.opened.vault).meta.masterKeyChanged ?? .init(secondsSinceYearOne: 0)
            if remoteCredentialsGiven && remoteKeyChanged > localKeyChanged { rotated = remote }
        }
        if let rotated {
            vault.meta.masterKeyChanged = rotated.vault.meta.masterKeyChanged
            vault.meta.masterKeyChangeRecommended = rotated.vault.meta.masterKeyChangeRecommended
            vault.meta.masterKeyChangeForced = rotated.vault.meta.masterKeyChangeForced
            report.sections[report.sections.count - 1].warnings.append(
                "the master key was changed on another device; the merged vault is written with that key")
        }
        let writeKey = rotated == nil ? unlocked.key : remoteKey
        let writeSettings = rotated?.settings ?? unlocked.opened.settings
        let writeDerived = rotated?.derivedKey ?? unlocked.opened.derivedKey
        let changed = report.sections.contains { !$0.changes.isEmpty } || rotated != nil
        if !parsed.flag("dry-run") {
            if let outputPath = parsed.value("output") {
                let (file, derived) = try KDBXWriter.serialize(
                    vault, settings: writeSettings, key: writeKey, cachedKey: writeDerived, limits: unlocked.limits)
                let check = try KDBXReader.open(file, key: writeKey, cachedKey: derived, limits: unlocked.limits)
                guard check.vault == vault else {
                    throw KDBXError.unwritable("the merged file did not read back identical; nothing was written")
                }
                ProcessLifetime.keepUntilExit(check)
                try AtomicFileWriter.write(file, toPath: outputPath)
                report.written = outputPath
            } else if changed {
                // LOCAL is replaced only if it is still the version merged into (compare-and-swap); a
                // change made meanwhile is merged in too.
                let session = try SyncSession(path: localPath, working: unlocked.opened, key: unlocked.key, state: state,
                                              limits: unlocked.limits, basedOn: unlocked.fingerprint, workingIsOnDisk: true)
                if rotated != nil { session.adoptCredentials(key: writeKey, settings: writeSettings, derivedKey: writeDerived) }
                let deviceSettings = try DeviceSettings.load()
                session.keepsBackup = parsed.flag("backup") || deviceSettings.backups
                session.rotatesKDFSalt = deviceSettings.rotateKDFSalt
                session.update(vault)
                let save = try session.saveMerging()
                if !save.mergedFromDisk.isEmpty {
                    report.sections.append(.init(remote: localPath + " (changed during the merge)", changes: save.mergedFromDisk, warnings: []))
                }
                report.written = save.wroteFile ? localPath : nil
            }
        }
        ProcessLifetime.keepUntilExit(vault)
        report.dryRun = parsed.flag("dry-run")
        report.unchanged = !report.dryRun && report.written == nil
        output.print(parsed.flag("json") ? try JSONText.encode(report) : report.humanText(local: localPath))
        return parsed.flag("exit-code") && report.sections.contains(where: { !$0.changes.isEmpty }) ? .differences : .success
    }
}

/// Why `merge` stops without writing.
enum MergeRefusal: Error, CustomStringConvertible {
    /// A remote does not open with the known credentials: its key was changed on another device.
    case keyRotated(String)

    var description: String {
        switch self {
        case .keyRotated(let path):
            "\(path) does not open with these credentials (its key was probably changed on another device); nothing was written. Use --remote-password-stdin or --remote-key-file."
        }
    }
}

/// What `merge` prints.
struct MergeReport: Encodable {
    struct Section: Encodable {
        let remote: String
        let changes: [Change]
        var warnings: [String]
    }

    let schema = 1
    var sections: [Section] = []
    var written: String?
    var dryRun = false
    /// Nothing to write: the merged content is what LOCAL already holds (the file is left untouched).
    var unchanged = false

    /// A review of what changes in the local vault.
    func humanText(local: String) -> String {
        var lines: [String] = []
        for section in sections {
            if section.changes.isEmpty {
                lines.append("\(section.remote.terminalSafe): nothing to merge")
            } else {
                lines.append("\(section.remote.terminalSafe): \(section.changes.count) change(s) to \(local.terminalSafe)")
                for change in section.changes { lines.append("  " + ChangeText.line(change)) }
            }
            for warning in section.warnings { lines.append("  warning: \(warning.terminalSafe)") }
        }
        if let written {
            lines.append("wrote \(written)")
        } else if dryRun {
            lines.append("dry run: nothing written")
        } else {
            lines.append("unchanged: \(local) already holds the merged content; not written")
        }
        return lines.joined(separator: "\n")
    }
}

/// One change as a line of text.
enum ChangeText {
    static func line(_ change: Change) -> String {
        let verb: String = switch change.kind {
        case .added: "+ added"
        case .updated: "~ updated"
        case .moved: "> moved"
        case .deleted: "- deleted"
        case .restored: "+ restored"
        case .conflict: "! conflict"
        case .historyMerged: "  history"
        case .historyTrimmed: "  history trimmed"
        case .metaChanged: "~ settings"
        case .recycleBinMerged: "~ recycle bin"
        }
        var text = "\(verb) \(change.subject.rawValue) \(change.path.terminalSafe)"
        if !change.fields.isEmpty { text += ": " + change.fields.joined(separator: ", ").terminalSafe }
        if !change.detail.isEmpty { text += " (\(change.detail.terminalSafe))" }
        return text
    }
}

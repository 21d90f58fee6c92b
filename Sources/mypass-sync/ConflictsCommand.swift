internal import Foundation
internal import MyPassSync

/// `mypass-sync conflicts PATH [--merge] [--dry-run] [--json]`.
struct ConflictsCommand: Command {
    let name = "conflicts"
    let summary = "List (and with --merge, fold in) the sync-conflict copies of the vaults in a folder."
    let usage = "mypass-sync conflicts <vault-or-folder> [--merge [--dry-run] | --merged] [--json] [credentials]"
    let arguments = "  <vault-or-folder>       A vault, or a folder whose vaults are checked."
    let notes = """
        Recognised: NAME.sync-conflict-YYYYMMDD-HHMMSS-DEVICE.kdbx (Syncthing),
        NAME (… conflicted copy …).kdbx (Dropbox), NAME (conflicted copy …).kdbx (Nextcloud, ownCloud).
        Copies that do not open with the vault's credentials are reported and left where they are.
        A merged copy, or one that carried nothing new, is kept on this device outside the synced folder
        (the newest \(RetiredCopies.maximumCount) per vault, for \(Int(RetiredCopies.maximumAge / 86_400)) days; see --merged) and removed
        from the folder only after the merged vault is durably saved. A merge that changes nothing
        leaves the vault file untouched.
        """
    let merge = Flag("--merge", help: "Merge each copy into its vault; keep it on this device (state directory) and remove it from the folder.")
    let merged = Flag("--merged", help: "List the copies this device merged and keeps (no password needed).")
    let dryRun = Flag("--dry-run", help: "With --merge: show what would be merged; change nothing.")
    let json = Flag("--json", help: "Print one JSON document (schema 1).")
    let editing = EditingOptions()

    struct VaultReport: Encodable {
        let vault: String
        let copies: [ConflictCopies.Copy]
        let outcomes: [ConflictFolding.Outcome]
        /// Whether the vault file was replaced by this run.
        var wroteVault = false
        /// With --merged: the copies this device keeps.
        var merged: [RetiredCopies.Copy]?
        /// Why this vault of the folder was not merged.
        var skipped: Skipped?
    }

    /// Why a vault found in a folder was left alone.
    enum Skipped: String, Encodable {
        /// It does not open with the credentials given (anyone who can write there can plant one).
        case otherCredentials
        /// A symlink or another non-regular file under a vault's name: planted, never followed.
        case notARegularFile

        var explanation: String {
            switch self {
            case .otherCredentials: "it does not open with these credentials"
            case .notARegularFile: "a symlink or not a regular file (never followed)"
            }
        }
    }

    struct Report: Encodable {
        let schema = 1
        let vaults: [VaultReport]
    }

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        let parsed = try parse(arguments, count: 1...1)
        let target = parsed.positionals[0]
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: target, isDirectory: &isDirectory) else { throw FileError.notFound(path: target) }
        var vaults = [target]
        var reports: [VaultReport] = []
        if isDirectory.boolValue {
            let found = ConflictCopies.vaults(in: try DirectoryHandle(opening: target))
            vaults = found.filter(\.isRegularFile).map(\.path)
            // A symlink among the folder's vaults was planted (the user named the folder, not it): it
            // could lead a merge into a private vault elsewhere. Said, never followed.
            for planted in found where !planted.isRegularFile {
                reports.append(VaultReport(vault: planted.path, copies: [], outcomes: [], skipped: .notARegularFile))
            }
        }
        guard !(parsed[merge] && parsed[merged]) else {
            throw CommandLineError.usage(message: "--merge and --merged do not go together", command: name)
        }
        let state = editing.stateOptions.state(parsed)
        if parsed[merged] {
            for vault in vaults {
                reports.append(VaultReport(vault: vault, copies: ConflictCopies.find(for: vault), outcomes: [],
                                           merged: RetiredCopies(state: state, vaultPath: vault).list()))
            }
            output.print(parsed[json] ? try JSONText.encode(Report(vaults: reports)) : Self.mergedText(reports))
            return .success
        }
        // The credentials are asked once and used for every vault of the folder.
        var credentials: VaultCredentials?
        for vault in vaults {
            let copies = ConflictCopies.find(for: vault)
            var outcomes: [ConflictFolding.Outcome] = []
            var wroteVault = false
            if parsed[merge] && !copies.isEmpty {
                let file = try editing.credentials.read(parsed, path: vault)
                let vaultCredentials = try credentials ?? editing.credentials.credentials(parsed, for: vault, command: name)
                credentials = vaultCredentials
                let unlocked: UnlockedVault
                do {
                    unlocked = try file.unlock(vaultCredentials)
                } catch where isDirectory.boolValue && FailureKind(of: error) == .wrongCredentials {
                    // Another vault of the folder with other credentials (anyone who can write there
                    // can plant one): said, and the other vaults are still handled.
                    reports.append(VaultReport(vault: vault, copies: copies, outcomes: [], skipped: .otherCredentials))
                    continue
                }
                let folded = try ConflictFolding.fold(copies, into: unlocked, state: state, keepsBackup: parsed[editing.backupOptions.backup],
                                                      settings: DeviceSettings.load(), dryRun: parsed[dryRun])
                outcomes = folded.outcomes
                wroteVault = folded.wroteVault
            }
            reports.append(VaultReport(vault: vault, copies: copies, outcomes: outcomes, wroteVault: wroteVault))
        }
        if parsed[json] {
            output.print(try JSONText.encode(Report(vaults: reports)))
        } else {
            var lines: [String] = []
            for report in reports {
                lines.append("\(report.vault.terminalSafe): \(report.copies.isEmpty ? "no conflict copies" : "\(report.copies.count) conflict cop\(report.copies.count == 1 ? "y" : "ies")")"
                    + (report.skipped.map { "; skipped: \($0.explanation)" } ?? ""))
                for copy in report.copies where report.outcomes.isEmpty { lines.append("  \(copy.path.terminalSafe) (\(copy.engine.rawValue))") }
                for outcome in report.outcomes {
                    lines.append("  \(outcome.copy.terminalSafe): \(outcome.result.rawValue)" + (outcome.movedTo.map { ", kept as \($0.terminalSafe)" } ?? ""))
                    lines += outcome.changes.map { "    " + ReportText.line($0) }
                }
                if parsed[merge] && !parsed[dryRun] && !report.outcomes.isEmpty {
                    lines.append(report.wroteVault ? "  wrote \(report.vault.terminalSafe)" : "  unchanged: \(report.vault.terminalSafe) was not written")
                }
            }
            output.print(lines.joined(separator: "\n"))
        }
        return .success
    }

    /// The `--merged` listing as text.
    static func mergedText(_ reports: [VaultReport]) -> String {
        var lines: [String] = []
        let formatter = ISO8601DateFormatter()
        for report in reports {
            let merged = report.merged ?? []
            lines.append("\(report.vault.terminalSafe): \(merged.isEmpty ? "no merged copies kept" : "\(merged.count) merged cop\(merged.count == 1 ? "y" : "ies") kept")")
            lines += merged.map { "  \(formatter.string(from: $0.retired)) \($0.originalName.terminalSafe) (\($0.size) bytes): \($0.path.terminalSafe)" }
        }
        return lines.joined(separator: "\n")
    }
}

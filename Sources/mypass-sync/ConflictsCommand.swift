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
        NAME (… conflicted copy …).kdbx (Dropbox), NAME (conflicted copy …).kdbx (Nextcloud, ownCloud),
        OneDrive, Resilio, Seafile, pCloud, Google Drive, Unison, and rclone bisync (NAME.kdbx..path1,
        NAME.kdbx.conflictN, NAME.conflictN.kdbx, and the suffixes of "rcloneConflictSuffix" in the
        device settings). A vault that rclone renamed aside is gone while its copies are there: they
        are listed (with --merged, the copies kept); `watch` rebuilds the vault.
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

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        let parsed = try parse(arguments, count: 1...1)
        guard !(parsed[merge] && parsed[merged]) else {
            throw CommandLineError.usage(message: "--merge and --merged do not go together", command: name)
        }
        let action: FolderCopies.Action = parsed[merged] ? .listMerged
            : parsed[merge] ? .merge(dryRun: parsed[dryRun], keepsBackup: parsed[editing.backupOptions.backup]) : .list
        let report = try FolderCopies.run(
            action, at: parsed.positionals[0], state: try editing.stateOptions.state(parsed), settings: DeviceSettings.load(),
            read: { try editing.credentials.read(parsed, path: $0) },
            credentials: { try editing.credentials.credentials(parsed, for: $0, command: name) })
        if parsed[json] {
            output.print(try JSONText.encode(report))
        } else if case .listMerged = action {
            output.print(Self.mergedText(report.vaults))
        } else {
            var lines: [String] = []
            for vault in report.vaults {
                let count = vault.copies.count
                lines.append("\(vault.vault.terminalSafe): \(count == 0 ? "no conflict copies" : "\(count) conflict cop\(count == 1 ? "y" : "ies")")"
                    + (vault.skipped.map { "; skipped: \($0.explanation)" } ?? ""))
                for copy in vault.copies where vault.outcomes.isEmpty { lines.append("  \(copy.path.terminalSafe) (\(copy.engine.rawValue))") }
                for outcome in vault.outcomes {
                    lines.append("  \(outcome.copy.terminalSafe): \(outcome.result.rawValue)" + (outcome.movedTo.map { ", kept as \($0.terminalSafe)" } ?? ""))
                    lines += outcome.changes.map { "    " + ReportText.line($0) }
                }
                if parsed[merge] && !parsed[dryRun] && !vault.outcomes.isEmpty {
                    lines.append(vault.wroteVault ? "  wrote \(vault.vault.terminalSafe)" : "  unchanged: \(vault.vault.terminalSafe) was not written")
                }
            }
            output.print(lines.joined(separator: "\n"))
        }
        return .success
    }

    /// The `--merged` listing as text.
    static func mergedText(_ reports: [FolderCopies.VaultReport]) -> String {
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

internal import Foundation
public import MyPassCore

/// A vault as stable text for `git diff`, `git log -p` and `git show` (`mypass-sync git textconv`):
/// one line per property, groups and entries sorted by path, every secret masked and never written
/// (`EntryField.isSecret`: the password and every field a KeePass client keeps secret, whatever its
/// protection flag), attachments by name and size (no digest of their content, which would confirm a
/// guessed small secret such as a PIN in a text file), history by count. Every name and value is on its
/// one line (`InertText`: line breaks, controls and bidirectional overrides escaped), so no content
/// can forge a line or reorder one. The same vault always gives the same text, so a diff
/// shows exactly what changed.
public enum VaultTextConversion {
    /// The text of `vault`.
    public static func text(of vault: Vault) -> String {
        var lines = ["database \(quoted(vault.meta.databaseName))"]
        var groups: [(path: String, group: Group)] = []
        vault.root.forEachGroup { group, names in
            groups.append(("/" + names.map(VaultPath.escaped).joined(separator: "/"), group))
        }
        for (path, group) in groups.sorted(by: { $0.path < $1.path }) {
            lines.append("group \(quoted(path))")
            if !group.notes.isEmpty { lines.append("  notes: \(quoted(group.notes))") }
            let prefix = path == "/" ? "/" : path + "/"
            for entry in group.entries.sorted(by: { ($0.title, $0.uuid.uuidString) < ($1.title, $1.uuid.uuidString) }) {
                lines.append("entry \(quoted(prefix + VaultPath.escaped(entry.title)))")
                lines.append("  uuid: \(entry.uuid.uuidString)")
                for field in entry.fields.sorted(by: { $0.key < $1.key }) where field.key != EntryField.title {
                    let masked = EntryField.isSecret(key: field.key, value: field.value, protection: vault.meta.memoryProtection)
                    lines.append("  \(quoted(field.key)): " + (masked ? (field.value.text.isEmpty ? "(protected, empty)" : "******** (protected)")
                                                                : quoted(field.value.text)))
                }
                if !entry.tags.isEmpty { lines.append("  tags: \(quoted(entry.tags.sorted().joined(separator: ", ")))") }
                for attachment in entry.attachments.sorted(by: { $0.name < $1.name }) {
                    let size = vault.binaries[attachment.binary]?.data.count ?? 0
                    lines.append("  attachment: \(quoted(attachment.name)) (\(size) bytes)")
                }
                if entry.times.expires { lines.append("  expires: \(entry.times.expiryTime.iso8601)") }
                lines.append("  modified: \(entry.times.lastModified.iso8601)")
                lines.append("  history: \(entry.history.count) item(s)")
            }
        }
        lines.append("deleted objects: \(vault.deletedObjects.count)")
        return lines.joined(separator: "\n") + "\n"
    }

    /// A value on one line: line breaks, controls and bidirectional overrides escaped.
    private static func quoted(_ text: String) -> String { InertText.escaped(text) }
}

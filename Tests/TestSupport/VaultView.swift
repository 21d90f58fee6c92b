internal import Foundation
public import MyPassCore

/// Our reading of a vault in the fixtures' terms (the manifest and reference-tool view), so that it
/// can be compared with what pykeepass and KeePassXC see.
public struct VaultView {
    public let meta: FixtureVault.Meta
    public let groups: [String]
    /// Entries by lowercase UUID.
    public let entries: [String: FixtureVault.Entry]
    public let deletedObjects: Int

    public init(_ vault: Vault) {
        let recycleBin = vault.meta.recycleBinEnabled ? vault.meta.recycleBinUUID : nil
        var groups: [String] = []
        var entries: [String: FixtureVault.Entry] = [:]
        func walk(_ group: Group, _ path: [String], _ inBin: Bool) {
            for entry in group.entries {
                let attachments = entry.attachments
                    .map { FixtureVault.Attachment(name: $0.name, sha256: $0.binary.sha256) }
                    .sorted { $0.name < $1.name }
                let uuid = entry.uuid.uuidString.lowercased()
                entries[uuid] = FixtureVault.Entry(
                    uuid: uuid, group: "/" + path.joined(separator: "/"), title: entry.title, username: entry.userName,
                    password: entry.text("Password"), url: entry.url, notes: entry.notes, tags: entry.tags.sorted(),
                    fields: Dictionary(uniqueKeysWithValues: entry.customFields.map { ($0.key, $0.value.text) }),
                    protected: entry.fields.filter { $0.value.isProtected }.map(\.key).sorted(),
                    attachments: attachments, attachmentNames: attachments.map(\.name),
                    historyCount: entry.history.count, inRecycleBin: inBin)
            }
            for child in group.groups {
                groups.append("/" + (path + [child.name]).joined(separator: "/"))
                walk(child, path + [child.name], inBin || child.uuid == recycleBin)
            }
        }
        walk(vault.root, [], false)
        self.meta = FixtureVault.Meta(name: vault.meta.databaseName, recycleBin: recycleBin != nil)
        self.groups = groups.sorted()
        self.entries = entries
        self.deletedObjects = vault.deletedObjects.count
    }
}

extension FixtureVault.Entry {
    /// The names of the properties in which `other` differs from this entry (never their values).
    /// Attachments are compared by content where both sides report it, else by name.
    public func differences(from other: FixtureVault.Entry) -> [String] {
        var names: [String] = []
        if group != other.group { names.append("group") }
        if title != other.title { names.append("title") }
        if username != other.username { names.append("username") }
        if password != other.password { names.append("password") }
        if url != other.url { names.append("url") }
        if notes != other.notes { names.append("notes") }
        if tags != other.tags { names.append("tags") }
        if fields != other.fields { names.append("fields") }
        if protected != other.protected { names.append("protected") }
        if historyCount != other.historyCount { names.append("historyCount") }
        if inRecycleBin != other.inRecycleBin { names.append("inRecycleBin") }
        if let mine = attachments, let theirs = other.attachments {
            if mine != theirs { names.append("attachments") }
        } else if (attachmentNames ?? attachments?.map(\.name)) != (other.attachmentNames ?? other.attachments?.map(\.name)) {
            names.append("attachment names")
        }
        return names
    }
}

extension VaultView {
    /// Where a reference tool's view of the same file differs from ours: names of properties and
    /// entry titles, never values.
    public func differences(from theirs: ReferenceTools.View) -> [String] {
        var found: [String] = []
        if theirs.groups != groups { found.append("groups") }
        if theirs.meta != meta { found.append("name and recycle bin") }
        if theirs.deletedObjects != deletedObjects { found.append("tombstones") }
        if theirs.entries.count != entries.count { found.append("entry count \(entries.count) vs \(theirs.entries.count)") }
        for their in theirs.entries {
            guard let our = entries[their.uuid] else {
                found.append("entry \(their.uuid) missing")
                continue
            }
            let differences = our.differences(from: their)
            if !differences.isEmpty { found.append("\(their.title): \(differences.joined(separator: ", "))") }
        }
        return found
    }
}

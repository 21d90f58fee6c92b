internal import Foundation
public import MyPassCore

/// What differs between two vaults, in the merge's change vocabulary: the changes that turn `a` into
/// `b`, per object and field (names only, never values). With a base, fields both sides changed
/// differently since the base are reported as conflicts.
public enum VaultDiff {
    /// The changes that turn `a` into `b`; with `base`, fields both changed since are conflicts.
    public static func diff(from a: Vault, to b: Vault, base: Vault? = nil) -> [Change] {
        let left = VaultIndex(a), right = VaultIndex(b), ancestor = base.map(VaultIndex.init)
        var changes: [Change] = []
        let metaFields = MetaMerger(ancestor: nil, local: a.meta, remote: b.meta).merge().changed
        if !metaFields.isEmpty {
            changes.append(Change(.metaChanged, .meta, uuid: nil, path: "/", title: b.meta.databaseName, fields: metaFields))
        }
        for id in Set(left.groups.keys).union(right.groups.keys).sorted(by: UUID.precedes) {
            switch (left.groups[id], right.groups[id]) {
            case (nil, let added?):
                changes.append(Change(.added, .group, uuid: id, path: right.path(ofGroup: id), title: added.group.name))
            case (let removed?, nil):
                changes.append(Change(.deleted, .group, uuid: id, path: left.path(ofGroup: id), title: removed.group.name))
            case let (old?, new?):
                let fields = groupFields(old.group, new.group)
                if !fields.isEmpty {
                    changes.append(Change(.updated, .group, uuid: id, path: right.path(ofGroup: id), title: new.group.name, fields: fields))
                }
                if old.parent != new.parent {
                    changes.append(Change(.moved, .group, uuid: id, path: right.path(ofGroup: id), title: new.group.name,
                                          detail: "from \(left.path(ofGroup: old.parent ?? left.rootUUID))"))
                }
            case (nil, nil):
                break
            }
        }
        for id in Set(left.entries.keys).union(right.entries.keys).sorted(by: UUID.precedes) {
            switch (left.entries[id], right.entries[id]) {
            case (nil, let added?):
                changes.append(Change(.added, .entry, uuid: id, path: entryPath(added, right), title: added.entry.title))
            case (let removed?, nil):
                changes.append(Change(.deleted, .entry, uuid: id, path: entryPath(removed, left), title: removed.entry.title,
                                      detail: b.deletedObjects.contains { $0.uuid == id } ? "tombstone" : "missing without a tombstone"))
            case let (old?, new?) where old.parent == new.parent && old.entry == new.entry:
                continue  // the same version in the same place: nothing to compare field by field
            case let (old?, new?):
                let fields = entryFields(old.entry, new.entry)
                let path = entryPath(new, right)
                if let baseEntry = ancestor?.entries[id]?.entry {
                    let conflicts = fields.filter { field in
                        property(field, baseEntry) != property(field, old.entry) && property(field, baseEntry) != property(field, new.entry)
                    }
                    if !conflicts.isEmpty {
                        changes.append(Change(.conflict, .entry, uuid: id, path: path, title: new.entry.title, fields: conflicts))
                    }
                    let plain = fields.filter { !conflicts.contains($0) }
                    if !plain.isEmpty { changes.append(Change(.updated, .entry, uuid: id, path: path, title: new.entry.title, fields: plain)) }
                } else if !fields.isEmpty {
                    changes.append(Change(.updated, .entry, uuid: id, path: path, title: new.entry.title, fields: fields))
                }
                if old.parent != new.parent {
                    changes.append(Change(.moved, .entry, uuid: id, path: path, title: new.entry.title,
                                          detail: "from \(left.path(ofGroup: old.parent))"))
                }
                let gained = historyGained(from: old.entry.history, to: new.entry.history)
                if gained > 0 {
                    // Counted by content: a history at its item limit gains a version and drops its
                    // oldest, and the gained version may be the only place a value is kept.
                    changes.append(Change(.historyMerged, .entry, uuid: id, path: path, title: new.entry.title,
                                          detail: "\(gained) more history item(s)"))
                } else if new.entry.history.count < old.entry.history.count {
                    changes.append(Change(.historyTrimmed, .entry, uuid: id, path: path, title: new.entry.title,
                                          detail: "\(old.entry.history.count - new.entry.history.count) fewer history item(s)"))
                }
            case (nil, nil):
                break
            }
        }
        return changes
    }

    /// How many versions `new` holds that `old` does not (by modification time and content; the
    /// form, field order and access times aside).
    static func historyGained(from old: [Entry], to new: [Entry]) -> Int {
        guard old != new else { return 0 }
        let known = Dictionary(grouping: old, by: \.times.lastModified)
        return new.filter { version in
            !(known[version.times.lastModified] ?? []).contains { entryFields($0, version).isEmpty }
        }.count
    }

    private static func entryPath(_ record: VaultIndex.EntryRecord, _ index: VaultIndex) -> String {
        (record.parent == index.rootUUID ? "" : index.path(ofGroup: record.parent)) + "/" + VaultPath.escaped(record.entry.title)
    }

    /// Names of the properties that differ between two versions of an entry.
    static func entryFields(_ a: Entry, _ b: Entry) -> [String] {
        var names = orderedUnion(a.fields.map(\.key), b.fields.map(\.key), []).filter { a.effectiveField($0) != b.effectiveField($0) }
        if Set(a.tags) != Set(b.tags) { names.append("Tags") }
        for name in orderedUnion(a.attachments.map(\.name), b.attachments.map(\.name), [])
        where a.attachments.first(where: { $0.name == name })?.binary != b.attachments.first(where: { $0.name == name })?.binary {
            names.append("Attachment '\(name)'")
        }
        if a.iconID != b.iconID || a.customIconUUID != b.customIconUUID { names.append("Icon") }
        if a.foregroundColor != b.foregroundColor || a.backgroundColor != b.backgroundColor { names.append("Colors") }
        if a.times.expires != b.times.expires || a.times.expiryTime != b.times.expiryTime { names.append("Expiry") }
        if a.autoType != b.autoType { names.append("AutoType") }
        // Per key, as the merge takes it: the order of the items is no content.
        if a.customData != b.customData, Set(a.customData.map { [$0.key, $0.value] }) != Set(b.customData.map { [$0.key, $0.value] }) {
            names.append("CustomData")
        }
        return names
    }

    /// A comparable stand-in for property `name` of `entry` (as `entryFields` names it).
    private static func property(_ name: String, _ entry: Entry) -> String {
        if let field = entry.field(name) { return (field.isProtected ? "p:" : "t:") + String(field.utf8Count) + ":" + field.text }
        switch name {
        case "Tags": return entry.tags.sorted().joined(separator: ";")
        case "Icon": return "\(entry.iconID)\(entry.customIconUUID?.uuidString ?? "")"
        case "Expiry": return "\(entry.times.expires)\(entry.times.expiryTime)"
        default:
            if name.hasPrefix("Attachment '") {
                let attachmentName = String(name.dropFirst(12).dropLast())
                return entry.attachments.first { $0.name == attachmentName }?.binary.sha256 ?? "-"
            }
            return name
        }
    }

    private static func groupFields(_ a: Group, _ b: Group) -> [String] {
        var names: [String] = []
        if a.name != b.name { names.append("Name") }
        if a.notes != b.notes { names.append("Notes") }
        if a.iconID != b.iconID || a.customIconUUID != b.customIconUUID { names.append("Icon") }
        if Set(a.tags) != Set(b.tags) { names.append("Tags") }
        if a.enableAutoType != b.enableAutoType || a.enableSearching != b.enableSearching { names.append("Settings") }
        if Set(a.customData.content.map { [$0.key, $0.value] }) != Set(b.customData.content.map { [$0.key, $0.value] }) {
            names.append("CustomData")
        }
        return names
    }
}

extension VaultDiff {
    /// Whether `a` and `b` hold the same content: no object or field differs (access times, usage
    /// counts and the order of fields aside). A merge whose result has the content of the file it
    /// would replace writes nothing: new bytes are a new version to every sync engine.
    public static func sameContent(_ a: Vault, _ b: Vault) -> Bool {
        a == b || diff(from: a, to: b).isEmpty
    }
}

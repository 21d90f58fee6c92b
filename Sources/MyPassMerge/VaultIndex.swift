internal import Foundation
internal import MyPassCore

/// Every entry and group of a vault by UUID, with its parent and its place among its siblings.
struct VaultIndex {
    struct EntryRecord {
        var entry: Entry
        var parent: UUID
        var position: Int
    }

    struct GroupRecord {
        /// The group without its children.
        var group: Group
        var parent: UUID?
        var position: Int
        var childGroups: [UUID]
        var childEntries: [UUID]
    }

    let vault: Vault
    private(set) var entries: UUIDTable<EntryRecord>
    private(set) var groups: [UUID: GroupRecord] = [:]
    /// Tombstones by UUID (latest deletion time when a UUID appears twice).
    private(set) var tombstones: [UUID: Timestamp] = [:]

    init(_ vault: Vault) {
        self.vault = vault
        entries = UUIDTable(minimumCapacity: Self.entryCount(vault.root))
        add(vault.root, parent: nil, position: 0)
        for deleted in vault.deletedObjects {
            tombstones[deleted.uuid] = max(tombstones[deleted.uuid] ?? deleted.deletedAt, deleted.deletedAt)
        }
    }

    private mutating func add(_ group: Group, parent: UUID?, position: Int) {
        var bare = group
        bare.groups = []
        bare.entries = []
        groups[group.uuid] = GroupRecord(
            group: bare, parent: parent, position: position,
            childGroups: group.groups.map(\.uuid), childEntries: group.entries.map(\.uuid))
        for (index, entry) in group.entries.enumerated() {
            entries[entry.uuid] = EntryRecord(entry: entry, parent: group.uuid, position: index)
        }
        for (index, child) in group.groups.enumerated() {
            add(child, parent: group.uuid, position: index)
        }
    }

    private static func entryCount(_ group: Group) -> Int {
        group.groups.reduce(group.entries.count) { $0 + entryCount($1) }
    }

    var rootUUID: UUID { vault.root.uuid }

    /// The newest modification, move or deletion this vault records.
    var newestChange: Timestamp {
        var newest = vault.root.times.lastModified
        for record in entries.values { newest = max(newest, record.entry.times.lastModified, record.entry.times.locationChanged) }
        for record in groups.values { newest = max(newest, record.group.times.lastModified, record.group.times.locationChanged) }
        for time in tombstones.values { newest = max(newest, time) }
        return newest
    }

    /// The group path of group `uuid` (`/A/B`; `/` for the root).
    func path(ofGroup uuid: UUID) -> String {
        var names: [String] = []
        var current: UUID? = uuid
        var guardCount = 0
        while let id = current, id != rootUUID, let record = groups[id], guardCount < 10_000 {
            names.append(record.group.name)
            current = record.parent
            guardCount += 1
        }
        return "/" + names.reversed().map(VaultPath.escaped).joined(separator: "/")
    }
}

extension UUID {
    /// A fixed order on UUIDs (by their bytes), cheaper than comparing their strings.
    static func precedes(_ lhs: UUID, _ rhs: UUID) -> Bool {
        withUnsafeBytes(of: lhs.uuid) { left in
            withUnsafeBytes(of: rhs.uuid) { right in
                left.lexicographicallyPrecedes(right)
            }
        }
    }
}

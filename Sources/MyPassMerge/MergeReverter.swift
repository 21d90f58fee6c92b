internal import Foundation
public import MyPassCore

/// Takes one merge back as a new edit of the current vault. The merge turned `before` into `after`;
/// every property it changed gets its `before` value again where the current vault still holds the
/// merged value (the current value goes to the entry's history, LastModificationTime becomes
/// `time`), objects it deleted are put back, objects it added are removed, moves are moved back — and
/// whatever was edited again since the merge is left as it is and reported. Because the result is an
/// ordinary newer edit, other devices take it in like any edit instead of refusing a rollback.
public enum MergeReverter {
    /// What an undo did.
    public struct Outcome: Sendable {
        public let vault: Vault
        /// What was taken back (names and paths, never values).
        public let reverted: [Change]
        /// What the merge changed but was edited again since: left as it is.
        public let keptEditedSince: [Change]
    }

    /// The current vault with the merge from `before` to `after` taken back at `time`.
    public static func revert(current: Vault, before: Vault, after: Vault, at time: Timestamp = .now()) throws -> Outcome {
        var run = Reversal(before: VaultIndex(before), after: VaultIndex(after), current: current, time: time)
        try run.execute()
        return Outcome(vault: run.vault, reverted: run.reverted, keptEditedSince: run.kept)
    }
}

private struct Reversal {
    let before: VaultIndex
    let after: VaultIndex
    var vault: Vault
    let time: Timestamp
    var reverted: [Change] = []
    var kept: [Change] = []

    init(before: VaultIndex, after: VaultIndex, current: Vault, time: Timestamp) {
        self.before = before
        self.after = after
        self.vault = current
        self.time = time
    }

    mutating func execute() throws {
        let current = VaultIndex(vault)
        try restoreDeletedGroups(current)
        for id in Set(before.entries.keys).union(after.entries.keys).sorted(by: UUID.precedes) {
            try revertEntry(id, current: current)
        }
        for id in Set(before.groups.keys).intersection(after.groups.keys).sorted(by: UUID.precedes) where id != before.rootUUID {
            try revertGroup(id, current: current)
        }
        // Settings before the groups: a recycle bin the merge brought stops being the bin, then goes.
        revertMeta(current.vault.meta)
        try removeAddedGroups()
        // Attachments put back need their data in the pool.
        var used = Set<BinaryID>()
        for record in VaultIndex(vault).entries.values { record.entry.collectBinaryReferences(into: &used) }
        for id in used where vault.binaries[id] == nil {
            if let binary = before.vault.binaries[id] { _ = vault.binaries.add(binary.data, isProtected: binary.isProtected) }
        }
    }

    private func path(ofEntry entry: Entry, in index: VaultIndex, parent: UUID) -> String {
        (parent == index.rootUUID ? "" : index.path(ofGroup: parent)) + "/" + VaultPath.escaped(entry.title)
    }

    private mutating func revertEntry(_ id: UUID, current: VaultIndex) throws {
        let mine = current.entries[id]
        switch (before.entries[id], after.entries[id]) {
        case let (old?, merged?):
            let changed = EntryProperty.all(of: [old.entry, merged.entry]).filter { $0.differs(old.entry, merged.entry) }
            let path = self.path(ofEntry: merged.entry, in: after, parent: merged.parent)
            guard let mine else {
                if !changed.isEmpty || old.parent != merged.parent {
                    kept.append(Change(.deleted, .entry, uuid: id, path: path, title: merged.entry.title, detail: "deleted since the merge; left deleted"))
                }
                return
            }
            let revertible = changed.filter { !$0.differs(mine.entry, merged.entry) }
            let editedSince = changed.filter { $0.differs(mine.entry, merged.entry) }
            if !revertible.isEmpty {
                vault = try vault.updatingEntry(id, at: time) { entry in for property in revertible { property.copy(&entry, old.entry) } }
                reverted.append(Change(.updated, .entry, uuid: id, path: path, title: merged.entry.title, fields: revertible.map(\.name)))
            }
            if !editedSince.isEmpty {
                kept.append(Change(.conflict, .entry, uuid: id, path: path, title: merged.entry.title, fields: editedSince.map(\.name),
                                   detail: "edited again since the merge; left as it is"))
            }
            guard old.parent != merged.parent else { return }
            if mine.parent == merged.parent && vault.root.group(old.parent) != nil {
                vault = try vault.movingEntry(id, to: old.parent, at: time)
                reverted.append(Change(.moved, .entry, uuid: id, path: self.path(ofEntry: old.entry, in: before, parent: old.parent), title: old.entry.title))
            } else {
                kept.append(Change(.moved, .entry, uuid: id, path: path, title: merged.entry.title, detail: "moved again since the merge; left there"))
            }
        case let (old?, nil):
            // The merge deleted it: back where it was (or under the root when that group is gone too).
            guard mine == nil else { return }
            let parent = vault.root.group(old.parent) != nil ? old.parent : vault.root.uuid
            vault = try vault.restoringEntry(old.entry, to: parent, at: time)
            reverted.append(Change(.restored, .entry, uuid: id, path: path(ofEntry: old.entry, in: before, parent: old.parent), title: old.entry.title))
        case let (nil, merged?):
            // The merge added it: removed, unless it was edited or moved since.
            guard let mine else { return }
            let path = self.path(ofEntry: merged.entry, in: after, parent: merged.parent)
            if mine.entry == merged.entry && mine.parent == merged.parent {
                vault = try vault.deletingEntry(id, permanently: true, at: time)
                reverted.append(Change(.deleted, .entry, uuid: id, path: path, title: merged.entry.title))
            } else {
                kept.append(Change(.added, .entry, uuid: id, path: path, title: merged.entry.title, detail: "edited since the merge added it; kept"))
            }
        case (nil, nil):
            break
        }
    }

    /// Groups the merge deleted, parents first.
    private mutating func restoreDeletedGroups(_ current: VaultIndex) throws {
        let deleted = before.groups.keys.filter { after.groups[$0] == nil && current.groups[$0] == nil }
        for id in deleted.sorted(by: { depth($0, in: before) < depth($1, in: before) }) {
            guard let old = before.groups[id], let parent = old.parent else { continue }
            vault = try vault.restoringGroup(old.group, to: vault.root.group(parent) != nil ? parent : vault.root.uuid, at: time)
            reverted.append(Change(.restored, .group, uuid: id, path: before.path(ofGroup: id), title: old.group.name))
        }
    }

    /// Groups the merge added that are as it left them and empty now, children first.
    private mutating func removeAddedGroups() throws {
        let current = VaultIndex(vault)
        let added = after.groups.keys.filter { before.groups[$0] == nil && current.groups[$0] != nil }
        for id in added.sorted(by: { depth($0, in: after) > depth($1, in: after) }) {
            guard let merged = after.groups[id], let mine = VaultIndex(vault).groups[id] else { continue }
            let untouched = !GroupProperty.all.contains { $0.differs(mine.group, merged.group) }
            if untouched && mine.childEntries.isEmpty && mine.childGroups.isEmpty && vault.meta.recycleBinUUID != id {
                vault = try vault.deletingGroup(id, permanently: true, at: time)
                reverted.append(Change(.deleted, .group, uuid: id, path: after.path(ofGroup: id), title: merged.group.name))
            } else {
                kept.append(Change(.added, .group, uuid: id, path: after.path(ofGroup: id), title: merged.group.name,
                                   detail: "changed or filled since the merge added it; kept"))
            }
        }
    }

    private mutating func revertGroup(_ id: UUID, current: VaultIndex) throws {
        guard let old = before.groups[id], let merged = after.groups[id] else { return }
        guard let mine = current.groups[id] else { return }
        let changed = GroupProperty.all.filter { $0.differs(old.group, merged.group) }
        let revertible = changed.filter { !$0.differs(mine.group, merged.group) }
        if !revertible.isEmpty {
            vault = try vault.updatingGroup(id, at: time) { group in for property in revertible { property.copy(&group, old.group) } }
            reverted.append(Change(.updated, .group, uuid: id, path: after.path(ofGroup: id), title: old.group.name, fields: revertible.map(\.name)))
        }
        let editedSince = changed.filter { $0.differs(mine.group, merged.group) }
        if !editedSince.isEmpty {
            kept.append(Change(.conflict, .group, uuid: id, path: after.path(ofGroup: id), title: mine.group.name, fields: editedSince.map(\.name),
                               detail: "edited again since the merge; left as it is"))
        }
        if let parent = old.parent, old.parent != merged.parent, mine.parent == merged.parent, vault.root.group(parent) != nil {
            vault = try vault.movingGroup(id, to: parent, at: time)
            reverted.append(Change(.moved, .group, uuid: id, path: before.path(ofGroup: id), title: old.group.name))
        }
    }

    /// Vault settings the merge changed and nobody changed since: back, with their change times now.
    private mutating func revertMeta(_ mine: Meta) {
        let (old, merged) = (before.vault.meta, after.vault.meta)
        var fields: [String] = []
        func revert<T: Equatable>(_ name: String, _ value: (Meta) -> T, _ apply: (inout Meta) -> Void) {
            guard value(old) != value(merged), value(mine) == value(merged) else { return }
            apply(&vault.meta)
            fields.append(name)
        }
        revert("DatabaseName", { $0.databaseName }) { $0.databaseName = old.databaseName; $0.databaseNameChanged = time }
        revert("DatabaseDescription", { $0.databaseDescription }) { $0.databaseDescription = old.databaseDescription; $0.databaseDescriptionChanged = time }
        revert("DefaultUserName", { $0.defaultUserName }) { $0.defaultUserName = old.defaultUserName; $0.defaultUserNameChanged = time }
        revert("RecycleBin", { [$0.recycleBinEnabled ? "1" : "0", $0.recycleBinUUID?.uuidString ?? ""] }) {
            $0.recycleBinEnabled = old.recycleBinEnabled
            $0.recycleBinUUID = old.recycleBinUUID
            $0.recycleBinChanged = time
        }
        revert("HistoryMaxItems", { $0.historyMaxItems }) { $0.historyMaxItems = old.historyMaxItems; $0.settingsChanged = time }
        revert("HistoryMaxSize", { $0.historyMaxSize }) { $0.historyMaxSize = old.historyMaxSize; $0.settingsChanged = time }
        revert("MaintenanceHistoryDays", { $0.maintenanceHistoryDays }) { $0.maintenanceHistoryDays = old.maintenanceHistoryDays; $0.settingsChanged = time }
        revert("Color", { $0.color }) { $0.color = old.color; $0.settingsChanged = time }
        for flag in MemoryProtectionFlag.allCases {
            revert(flag.elementName, { flag.isOn(in: $0.memoryProtection) }) {
                flag.set(flag.isOn(in: old.memoryProtection), in: &$0.memoryProtection)
                $0.settingsChanged = time
            }
        }
        if !fields.isEmpty {
            reverted.append(Change(.metaChanged, .meta, uuid: nil, path: "/", title: vault.meta.databaseName, fields: fields))
        }
    }

    private func depth(_ id: UUID, in index: VaultIndex) -> Int {
        var depth = 0
        var current = index.groups[id]?.parent
        while let parent = current, depth < 10_000 {
            depth += 1
            current = index.groups[parent]?.parent
        }
        return depth
    }
}

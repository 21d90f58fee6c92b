public import Foundation

/// Edits of entries as pure functions `Vault -> Vault`, with KeePass's bookkeeping as KeePassXC
/// keeps it: the previous version goes to history (trimmed to HistoryMaxItems / HistoryMaxSize),
/// LastModificationTime moves on, moves set LocationChanged and PreviousParentGroup, deletion goes
/// through the recycle bin or leaves a tombstone.
extension Vault {
    /// A vault with a new entry in group `parent` whose standard fields are `title`, `userName`,
    /// `password`, `url` and `notes` (protected as Meta's memory protection says), with `change`
    /// applied (custom fields, tags, expiry, icon, TOTP). Returns its UUID.
    public func addingEntry(
        title: String, userName: String = "", password: String = "", url: String = "", notes: String = "",
        to parent: UUID, at time: Timestamp = .now(), uuid: UUID = UUID(), change: EntryChange = EntryChange()
    ) throws(VaultEditError) -> (vault: Vault, uuid: UUID) {
        guard !title.isEmpty else { throw .invalidName("an entry needs a title") }
        var entry = Entry(uuid: uuid, times: Times(allAt: time))
        let protection = meta.memoryProtection
        for (key, value) in [(EntryField.title, title), (EntryField.userName, userName), (EntryField.password, password), (EntryField.url, url), (EntryField.notes, notes)] {
            try EntryChange.checkStorable(value, field: key)
            entry.fields.append(EntryField(key: key, value: FieldValue(value, isProtected: protection.protects(key))))
        }
        try change.apply(to: &entry, protection: protection)
        var result = self
        guard result.root.modifyGroup(parent, { $0.entries.append(entry) }) != nil else { throw .groupNotFound(parent) }
        return (result, uuid)
    }

    /// A vault where `change` was applied to entry `uuid`. If the entry changed, its previous version
    /// is pushed into history (then trimmed) and LastModificationTime / LastAccessTime become `time`.
    public func updatingEntry(
        _ uuid: UUID, at time: Timestamp = .now(), _ change: (inout Entry) throws -> Void
    ) throws -> Vault {
        var result = self
        let limits = (items: meta.historyMaxItems, size: meta.historyMaxSize)
        let pool = binaries
        let found: Void? = try result.root.modifyGroupContainingEntry(uuid) { entry in
            let before = entry
            try change(&entry)
            entry.uuid = before.uuid
            entry.history = before.history
            guard entry != before else { return }
            entry.history.append(before.withoutHistory)
            entry.times.lastModified = time
            entry.times.lastAccessed = time
            entry.trimHistory(maxItems: limits.items, maxSize: limits.size) { pool[$0]?.data.count ?? 0 }
        }
        guard found != nil else { throw VaultEditError.entryNotFound(uuid) }
        result.droppingUnreferencedBinaries()
        return result
    }

    /// A vault where entry `uuid` sits in group `destination`, with LocationChanged = `time` and
    /// PreviousParentGroup = its former group. Moving into the group it is in changes nothing.
    public func movingEntry(_ uuid: UUID, to destination: UUID, at time: Timestamp = .now()) throws(VaultEditError) -> Vault {
        guard root.group(destination) != nil else { throw .groupNotFound(destination) }
        var result = self
        guard case (var entry, let parent)? = result.root.removeEntry(uuid) else { throw .entryNotFound(uuid) }
        guard parent != destination else { return self }
        entry.times.locationChanged = time
        entry.previousParentGroup = parent
        _ = result.root.modifyGroup(destination) { $0.entries.append(entry) }
        return result
    }

    /// A vault without entry `uuid` in its place: moved to the recycle bin (created if needed) when
    /// the bin is enabled, the entry is not already in it and `permanently` is false; otherwise
    /// removed with a tombstone in DeletedObjects.
    public func deletingEntry(_ uuid: UUID, permanently: Bool = false, at time: Timestamp = .now()) throws(VaultEditError) -> Vault {
        guard let (_, parent) = root.entry(uuid) else { throw .entryNotFound(uuid) }
        if !permanently && meta.recycleBinEnabled && !isInRecycleBin(group: parent) {
            let (withBin, bin) = ensuringRecycleBin(at: time)
            return try withBin.movingEntry(uuid, to: bin, at: time)
        }
        var result = self
        _ = result.root.removeEntry(uuid)
        result.deletedObjects.append(DeletedObject(uuid: uuid, deletedAt: time))
        result.droppingUnreferencedBinaries()
        return result
    }

    /// Whether group `uuid` is the recycle bin or inside it.
    public func isInRecycleBin(group uuid: UUID) -> Bool {
        guard let bin = meta.recycleBinUUID, let path = root.pathToGroup(uuid) else { return false }
        return path.contains(bin)
    }

    /// The vault with a recycle bin (created like KeePassXC's if missing), as a new vault has one.
    public func withRecycleBin(at time: Timestamp = .now()) -> Vault {
        ensuringRecycleBin(at: time).0
    }

    /// The vault with a recycle bin group (created like KeePassXC's if missing) and its UUID.
    func ensuringRecycleBin(at time: Timestamp) -> (Vault, UUID) {
        if let bin = meta.recycleBinUUID, root.group(bin) != nil { return (self, bin) }
        var result = self
        let bin = Group(uuid: UUID(), name: "Recycle Bin", iconID: 43, times: Times(allAt: time),
                        isExpanded: false, enableAutoType: false, enableSearching: false)
        result.root.groups.append(bin)
        result.meta.recycleBinUUID = bin.uuid
        result.meta.recycleBinChanged = time
        return (result, bin.uuid)
    }
}

extension Entry {
    /// Drops the oldest history items until at most `maxItems` remain and their total size is at most
    /// `maxSize` bytes (negative limits mean unlimited), as KeePass does after each edit.
    public mutating func trimHistory(maxItems: Int, maxSize: Int64, binarySize: (BinaryID) -> Int) {
        if maxItems >= 0, history.count > maxItems {
            history.removeFirst(history.count - maxItems)
        }
        guard maxSize >= 0 else { return }
        var sizes = history.map { Int64($0.approximateSize(binarySize: binarySize)) }
        var total = sizes.reduce(0, +)
        while total > maxSize, !history.isEmpty {
            total -= sizes.removeFirst()
            history.removeFirst()
        }
    }
}

extension Group {
    /// Runs `body` on entry `uuid` in this subtree; nil when it is not here.
    mutating func modifyGroupContainingEntry<T>(_ uuid: UUID, _ body: (inout Entry) throws -> T) rethrows -> T? {
        if let index = entries.firstIndex(where: { $0.uuid == uuid }) { return try body(&entries[index]) }
        for index in groups.indices {
            if let result = try groups[index].modifyGroupContainingEntry(uuid, body) { return result }
        }
        return nil
    }

}

extension Vault {
    /// Drops attachment bytes no entry or history item refers to any more (an edit trimmed the
    /// history that held them, or a deletion removed the last entry): a file never stores them, so a
    /// vault that kept them would not read back identical.
    mutating func droppingUnreferencedBinaries() {
        guard !binaries.binaries.isEmpty else { return }
        let used = root.referencedBinaries()
        if used.count < binaries.binaries.count { binaries.retainOnly(used) }
    }
}

public import Foundation

/// A shared group's subtree as a container file holds it, and the vault as a container would
/// make it: the two views the three-way merge of a share compares. Pure tree operations; the merge
/// itself is `SharedGroupMerge` (MyPassMerge).
extension Vault {
    /// The container this vault writes for its group `groupID` (KeePassXC's layout: a new database whose
    /// root is a copy of the group, same UUID and name, without the reference; subgroups kept): the
    /// group's entries with their history and attachments, the custom icons they use, the vault's
    /// history limits and memory protection, no recycle bin. `previous`, the container as this device
    /// last exchanged it, keeps its root and settings (only the content is shared) and gives the tombstones:
    /// each object it held that is no longer in the group (deleted here, or moved out) gets one, so
    /// importers drop it, and its tombstones still in force are carried on. Nil when there is no such group.
    public func shareContainer(of groupID: UUID, previous: Vault?, at time: Timestamp) -> Vault? {
        guard var group = root.group(groupID) else { return nil }
        group.customData.removeAll { $0.key == ShareReference.customDataKey }
        var container: Vault
        if let previous {
            // The container's own root and settings stay as they are: only the content is shared.
            container = previous
            container.root.entries = group.entries
            container.root.groups = group.groups
        } else {
            container = Vault.empty(name: group.name, at: time)
            container.root = group
            container.meta.recycleBinEnabled = false
            container.meta.historyMaxItems = meta.historyMaxItems
            container.meta.historyMaxSize = meta.historyMaxSize
            container.meta.memoryProtection = meta.memoryProtection
        }
        let icons = Set(container.root.usedCustomIcons)
        container.meta.customIcons = meta.customIcons.filter { icons.contains($0.uuid) }
        var binaries = binaries
        binaries.retainOnly(container.root.referencedBinaries())
        container.binaries = binaries
        if let previous {
            let present = Set(group.allUUIDs)
            let deletedHere = Dictionary(deletedObjects.map { ($0.uuid, $0.deletedAt) }, uniquingKeysWith: max)
            let gone = previous.root.allUUIDs.dropFirst().filter { !present.contains($0) }
            var tombstones = previous.deletedObjects.filter { !present.contains($0.uuid) }
            let known = Set(tombstones.map(\.uuid))
            tombstones += gone.filter { !known.contains($0) }.map { DeletedObject(uuid: $0, deletedAt: deletedHere[$0] ?? time) }
            container.deletedObjects = tombstones
        }
        return container
    }

    /// This vault with the content of its group `groupID` (entries and subgroups, not the group's own
    /// properties) replaced by the content of `container`'s root: the vault as the container's writer
    /// would have it. An object of the container found elsewhere in the vault is taken out there (it
    /// was moved out of the group here; the merge decides where it ends); objects whose UUID is the
    /// group's, one of its ancestors' or the root's are never taken in. The container's tombstones
    /// count only for objects in `scope` (the share's objects: KeePassXC's containers carry every
    /// tombstone of the vault that wrote them). Its attachments and custom icons are added.
    public func replacingSharedContent(of groupID: UUID, with container: Vault, scope: Set<UUID>) -> Vault? {
        guard let path = root.pathToGroup(groupID) else { return nil }
        let reserved = Set(path + [groupID, root.uuid])
        var content = container.root
        content.removeObjects(reserved)
        let incoming = Set(content.allUUIDs.dropFirst())
        var result = self
        guard var group = result.root.group(groupID) else { return nil }
        group.entries = []
        group.groups = []
        _ = result.root.modifyGroup(groupID) { $0 = group }
        result.root.removeObjects(incoming)
        _ = result.root.modifyGroup(groupID) { target in
            target.entries = content.entries
            target.groups = content.groups
        }
        let tombstoned = Set(result.deletedObjects.map(\.uuid))
        result.deletedObjects += container.deletedObjects.filter { scope.contains($0.uuid) && !tombstoned.contains($0.uuid) && !incoming.contains($0.uuid) }
        for id in content.referencedBinaries() where result.binaries[id] == nil {
            if let pooled = container.binaries[id] { _ = result.binaries.add(pooled.data, isProtected: pooled.isProtected) }
        }
        let icons = Set(result.meta.customIcons.map(\.uuid))
        result.meta.customIcons += container.meta.customIcons.filter { !icons.contains($0.uuid) }
        return result
    }

    /// Every entry and group UUID below `groupID`, the group included; empty when there is no such group.
    public func objectsOfGroup(_ groupID: UUID) -> Set<UUID> {
        root.group(groupID).map { Set($0.allUUIDs) } ?? []
    }
}

extension Vault {
    /// Every entry and group UUID of a container's content (its root excluded).
    public var containerObjects: Set<UUID> { Set(root.allUUIDs.dropFirst()) }
}

extension Group {
    /// Takes every entry and group in `uuids` out of this subtree (with what is below a removed group).
    mutating func removeObjects(_ uuids: Set<UUID>) {
        guard !uuids.isEmpty else { return }
        entries.removeAll { uuids.contains($0.uuid) }
        groups.removeAll { uuids.contains($0.uuid) }
        for index in groups.indices { groups[index].removeObjects(uuids) }
    }

    /// The custom icons this subtree's groups, entries and history items use.
    var usedCustomIcons: [UUID] {
        var used: [UUID] = []
        forEachGroup { group, _ in
            if let icon = group.customIconUUID { used.append(icon) }
            for entry in group.entries {
                used += ([entry] + entry.history).compactMap(\.customIconUUID)
            }
        }
        return used
    }
}

public import Foundation

/// Edits of groups, with the same bookkeeping as entries: LastModificationTime on change,
/// LocationChanged and PreviousParentGroup on moves, recycle bin or tombstones on deletion.
extension Vault {
    /// A vault with a new group `name` under `parent`; returns its UUID.
    public func addingGroup(
        named name: String, to parent: UUID, at time: Timestamp = .now(), uuid: UUID = UUID()
    ) throws(VaultEditError) -> (vault: Vault, uuid: UUID) {
        guard !name.isEmpty else { throw .invalidName("a group needs a name") }
        var result = self
        let group = Group(uuid: uuid, name: name, times: Times(allAt: time))
        guard result.root.modifyGroup(parent, { $0.groups.append(group) }) != nil else { throw .groupNotFound(parent) }
        return (result, uuid)
    }

    /// A vault where `change` was applied to group `uuid` (its subgroups and entries are not
    /// touched); LastModificationTime becomes `time` when something changed.
    public func updatingGroup(_ uuid: UUID, at time: Timestamp = .now(), _ change: (inout Group) throws -> Void) throws -> Vault {
        var result = self
        let found: Void? = try result.root.modifyGroup(uuid) { group in
            let before = group
            try change(&group)
            group.uuid = before.uuid
            group.groups = before.groups
            group.entries = before.entries
            if group != before {
                group.times.lastModified = time
                group.times.lastAccessed = time
            }
        }
        guard found != nil else { throw VaultEditError.groupNotFound(uuid) }
        return result
    }

    /// A vault where group `uuid` is called `name`.
    public func renamingGroup(_ uuid: UUID, to name: String, at time: Timestamp = .now()) throws -> Vault {
        guard !name.isEmpty else { throw VaultEditError.invalidName("a group needs a name") }
        return try updatingGroup(uuid, at: time) { $0.name = name }
    }

    /// A vault where group `uuid` sits under `destination`, with LocationChanged = `time` and
    /// PreviousParentGroup = its former parent.
    public func movingGroup(_ uuid: UUID, to destination: UUID, at time: Timestamp = .now()) throws(VaultEditError) -> Vault {
        guard uuid != root.uuid else { throw .rootGroup }
        guard let moving = root.group(uuid) else { throw .groupNotFound(uuid) }
        guard root.group(destination) != nil else { throw .groupNotFound(destination) }
        guard moving.group(destination) == nil else { throw .groupIntoItself(uuid) }
        var result = self
        guard case (var group, let parent)? = result.root.removeGroup(uuid) else { throw .groupNotFound(uuid) }
        guard parent != destination else { return self }
        group.times.locationChanged = time
        group.previousParentGroup = parent
        _ = result.root.modifyGroup(destination) { $0.groups.append(group) }
        return result
    }

    /// A vault without group `uuid` in its place: into the recycle bin when enabled and not already
    /// there (and `permanently` is false), otherwise removed with a tombstone for the group and for
    /// every group and entry below it.
    public func deletingGroup(_ uuid: UUID, permanently: Bool = false, at time: Timestamp = .now()) throws(VaultEditError) -> Vault {
        guard uuid != root.uuid else { throw .rootGroup }
        guard let group = root.group(uuid) else { throw .groupNotFound(uuid) }
        let isTheBin = uuid == meta.recycleBinUUID
        if !permanently && meta.recycleBinEnabled && !isTheBin && !isInRecycleBin(group: uuid) {
            let (withBin, bin) = ensuringRecycleBin(at: time)
            return try withBin.movingGroup(uuid, to: bin, at: time)
        }
        var result = self
        _ = result.root.removeGroup(uuid)
        result.deletedObjects.append(contentsOf: group.allUUIDs.map { DeletedObject(uuid: $0, deletedAt: time) })
        result.droppingUnreferencedBinaries()
        if isTheBin {
            result.meta.recycleBinUUID = nil
            result.meta.recycleBinChanged = time
        }
        return result
    }
}

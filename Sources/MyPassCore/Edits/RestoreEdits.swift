public import Foundation

/// Putting back objects a merge removed (what an undo of that merge does): the object as it was,
/// in `parent`, its tombstone dropped and its LocationChanged set to `time` — so that on every other
/// device the object, now newer than its deletion, is kept rather than deleted again.
extension Vault {
    /// A vault where `entry` (with its history) sits in group `parent` again.
    public func restoringEntry(_ entry: Entry, to parent: UUID, at time: Timestamp = .now()) throws(VaultEditError) -> Vault {
        guard root.entry(entry.uuid) == nil else { return self }
        var restored = entry
        restored.times.locationChanged = time
        var result = self
        guard result.root.modifyGroup(parent, { $0.entries.append(restored) }) != nil else { throw .groupNotFound(parent) }
        result.deletedObjects.removeAll { $0.uuid == entry.uuid }
        return result
    }

    /// A vault where `group` (its own properties, without children) sits in group `parent` again.
    public func restoringGroup(_ group: Group, to parent: UUID, at time: Timestamp = .now()) throws(VaultEditError) -> Vault {
        guard root.group(group.uuid) == nil else { return self }
        var restored = group
        restored.groups = []
        restored.entries = []
        restored.times.locationChanged = time
        var result = self
        guard result.root.modifyGroup(parent, { $0.groups.append(restored) }) != nil else { throw .groupNotFound(parent) }
        result.deletedObjects.removeAll { $0.uuid == group.uuid }
        return result
    }
}

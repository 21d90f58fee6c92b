public import Foundation
public import MyPassCore

/// The three-way merge of a shared group (KeePassXC's KeeShare) with its container file: only the
/// group's subtree is compared, against the container version this device last imported or
/// exported, with every merge rule (MERGE.md): a deletion in the container never destroys an edit
/// made here that its writer did not see, and nothing outside the group is touched except the
/// recycle bin (an entry the container deleted goes where a deletion sends it).
public enum SharedGroupMerge {
    /// `container` merged into the group `groupID` of `vault`, three-way against `exchanged` (the
    /// container this device last imported or exported; nil the first time, when the merge infers
    /// each entry's ancestor from history as it does without a base).
    public static func importing(_ container: Vault, exchanged: Vault?, into vault: Vault, group groupID: UUID,
                                 explaining: SecretFingerprint? = nil) throws(MergeError) -> MergeResult {
        let scope = vault.objectsOfGroup(groupID).union(container.containerObjects).union(exchanged?.containerObjects ?? [])
        guard let remote = vault.replacingSharedContent(of: groupID, with: container, scope: scope) else { throw .differentDatabases }
        let base = exchanged.flatMap { vault.replacingSharedContent(of: groupID, with: $0, scope: scope) }
        return try VaultMerger.merge(base: base, baseIsCertain: base != nil && isLater(container, than: exchanged), local: vault, remote: remote,
                                     explaining: explaining)
    }

    /// The container to write for the group `groupID` of `vault`: the group as a container
    /// (`Vault.shareContainer`), merged first with `current` (the container as it is now) when
    /// `current` changed since `exchanged`, so a change another writer made is kept, not overwritten.
    /// Nil when the vault has no such group.
    public static func exporting(_ vault: Vault, group groupID: UUID, current: Vault?, exchanged: Vault?,
                                 at time: Timestamp) throws(MergeError) -> Vault? {
        guard let fresh = vault.shareContainer(of: groupID, previous: exchanged ?? current, at: time) else { return nil }
        guard let current, exchanged.map({ !VaultDiff.sameContent($0, current) }) ?? true else { return fresh }
        let rooted = { (other: Vault) -> Vault in
            var copy = other
            copy.root.uuid = fresh.root.uuid
            return copy
        }
        var merged = try VaultMerger.merge(base: exchanged.map(rooted), baseIsCertain: isLater(current, than: exchanged), local: fresh,
                                           remote: rooted(current)).vault
        merged.meta.recycleBinEnabled = false
        merged.meta.recycleBinUUID = nil
        return merged
    }

    /// Whether `container` was written after `exchanged` (descends from it: every entry of it still
    /// there, or with a tombstone, in the same or a later version). Only then is `exchanged` certainly
    /// common to both sides, so that an entry the container dropped without a tombstone was deleted by
    /// its writer. Two devices that wrote the container at once, each from the version both had, leave
    /// siblings: the sync engine keeps one and makes the other a conflict copy, and what the kept one
    /// lacks of this device's export its writer never saw. The exchanged version is then merged against
    /// where it lies on both sides' line of history, and absence is not deletion.
    static func isLater(_ container: Vault, than exchanged: Vault?) -> Bool {
        exchanged.map { VaultMerger.descends(container, from: $0) } ?? false
    }
}

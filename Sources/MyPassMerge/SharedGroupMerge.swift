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
        return try VaultMerger.merge(base: base, baseIsCertain: base != nil, local: vault, remote: remote, explaining: explaining)
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
        var merged = try VaultMerger.merge(base: exchanged.map(rooted), baseIsCertain: exchanged != nil, local: fresh, remote: rooted(current)).vault
        merged.meta.recycleBinEnabled = false
        merged.meta.recycleBinUUID = nil
        return merged
    }
}

internal import SyncFiles
internal import SyncState
public import MyPassCore
internal import MyPassMerge

/// What differs between two versions of a vault, per object and field (names, never values).
public enum VaultComparison {
    /// The changes that turn `old` into `new`; with `base`, fields both changed since show as conflicts.
    public static func changes(from old: Vault, to new: Vault, base: Vault? = nil) -> [Change] {
        VaultDiff.diff(from: old, to: new, base: base)
    }

    /// Every property `old` and `new` differ on, with its states and the rule by which a merge of
    /// `new` into `old` would decide it (protected values as fingerprints salted for this call).
    public static func explanation(from old: Vault, to new: Vault, base: Vault? = nil) throws -> [FieldDecision] {
        try VaultMerger.merge(base: base, baseIsCertain: base != nil, local: old, remote: new, explaining: try SecretFingerprint.forOneMerge()) { DeferredRelease.drop($0) }
            .decisions
    }
}

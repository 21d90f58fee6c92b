public import MyPassCore
internal import MyPassMerge

/// What differs between two versions of a vault, per object and field (names, never values).
public enum VaultComparison {
    /// The changes that turn `old` into `new`; with `base`, fields both changed since show as conflicts.
    public static func changes(from old: Vault, to new: Vault, base: Vault? = nil) -> [Change] {
        VaultDiff.diff(from: old, to: new, base: base)
    }
}

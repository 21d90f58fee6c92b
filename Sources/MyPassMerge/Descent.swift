internal import Foundation
public import MyPassCore

extension VaultMerger {
    /// Whether `vault` descends from `base`: every entry of `base` is still there (or has a tombstone)
    /// in the same version or a later one that holds it in its history, and was not moved back to an
    /// older place. Only then is `base` a common ancestor worth merging against; a sync-conflict copy
    /// often branched off before the version a device holds now (the copy is its own older work), and
    /// merged against that version its older places and shorter histories would look like moves and
    /// cleaned history.
    public static func descends(_ vault: Vault, from base: Vault) -> Bool {
        var current: [UUID: Entry] = [:]
        vault.root.forEachGroup { group, _ in for entry in group.entries { current[entry.uuid] = entry } }
        let tombstones = Set(vault.deletedObjects.map(\.uuid))
        var earlierEntries: [Entry] = []
        base.root.forEachGroup { group, _ in earlierEntries.append(contentsOf: group.entries) }
        for earlier in earlierEntries {
            guard let later = current[earlier.uuid] else {
                if tombstones.contains(earlier.uuid) { continue }
                return false
            }
            let sameVersion = later.isSameVersion(as: earlier)
            let sameOrLater = sameVersion || later.history.contains { $0.isSameVersion(as: earlier) }
                || (later.history.isEmpty && later.times.lastModified >= earlier.times.lastModified)
            guard sameOrLater && later.times.locationChanged >= earlier.times.locationChanged else { return false }
            // The same version with fewer versions in its history is older, not later: two devices
            // edited the entry in the same second, and `base` already holds the other edit in its
            // history. Taken as a descendant, its shorter history would read as history cleaned.
            if sameVersion
                && !earlier.history.allSatisfy({ item in later.history.contains { $0.isSameVersion(as: item) } }) {
                return false
            }
        }
        return true
    }
}

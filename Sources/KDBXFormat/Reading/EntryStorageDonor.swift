internal import Foundation
internal import MyPassCore

/// The entries of a vault already in memory, by UUID, whose storage a vault being read takes
/// wherever it holds the same values: another version of the same vault (a merge's copy or base,
/// read beside the vault they are merged into) then costs memory only for what differs from it.
///
/// Only storage is shared. What the file says is decoded as always; a version is replaced by the
/// donor's only when the two are equal (`==`, protected values by their keyed digest, as everywhere),
/// so the vault read is the same value with or without a donor.
struct EntryStorageDonor {
    private var entries: [UUID: Entry] = [:]

    /// The entries of `vault` (with their history items); of entries sharing a UUID, the first.
    init(_ vault: Vault) {
        func add(_ group: Group) {
            for entry in group.entries where entries[entry.uuid] == nil { entries[entry.uuid] = entry }
            for child in group.groups { add(child) }
        }
        add(vault.root)
    }

    /// The donor's version of entry `uuid` (the entry or one of its history items) last modified at
    /// `lastModified`: the likeliest equal, and the one whose values a decoded version shares.
    func version(of uuid: UUID, lastModified: Timestamp) -> Entry? {
        guard let entry = entries[uuid] else { return nil }
        if entry.times.lastModified == lastModified { return entry.withoutHistory }
        return entry.history.last { $0.times.lastModified == lastModified }
    }

    /// `entry` (a current entry with its history, decoded) in the donor's storage where equal:
    /// the donor's history array when the items are equal, the donor's entry when all of it is.
    func sharing(_ entry: Entry) -> Entry {
        guard let own = entries[entry.uuid] else { return entry }
        var entry = entry
        if !entry.history.isEmpty, entry.history == own.history { entry.history = own.history }
        return entry == own ? own : entry
    }
}

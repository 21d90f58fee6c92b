internal import MyPassCore

/// Whether an object that only one side holds was deleted by the other (MERGE.md rules 6 and 7).
struct DeletionRules {
    let base: VaultIndex?
    /// The base was handed over by the user or the sync engine: certainly common to both sides.
    let baseIsCertain: Bool

    /// What becomes of an entry the other side does not hold.
    enum Outcome: Equatable {
        /// Kept where it is.
        case kept
        /// Deleted; with the time of the tombstone to add when the other side dropped it without one.
        case deleted(certainDropAt: Timestamp?)
        /// The other side deleted it at that time without having seen its edit: kept, in the recycle bin.
        case keptInRecycleBin(deletedAt: Timestamp)
    }

    /// Entry `present`, which `other` does not hold.
    func entry(_ present: VaultIndex.EntryRecord, absentFrom other: VaultIndex, newestThere: () -> Timestamp) -> Outcome {
        let ancestor = base?.entries[present.entry.uuid]
        let lastChange = Self.lastChange(of: present.entry.times)
        if let deletedAt = other.tombstones[present.entry.uuid] {
            // No ancestor: KeePass's time rule. An edit newer than the deletion keeps the entry.
            guard let ancestor, Self.edited(present.entry, since: ancestor.entry) else {
                return ancestor == nil && deletedAt <= lastChange ? .kept : .deleted(certainDropAt: nil)
            }
            // The deletion did not see this edit (it is newer than the ancestor both shared).
            return deletedAt > lastChange ? .keptInRecycleBin(deletedAt: deletedAt) : .kept
        }
        guard baseIsCertain, let ancestor, !Self.edited(present.entry, since: ancestor.entry), present.parent == ancestor.parent else {
            return .kept  // Absence is not deletion.
        }
        return .deleted(certainDropAt: Self.dropTime(after: lastChange, newestThere: newestThere()))
    }

    /// The tombstone time for group `present` when `other` dropped it without one from a certain base
    /// and `present` is unchanged since; nil otherwise.
    func droppedGroup(_ present: VaultIndex.GroupRecord, absentFrom other: VaultIndex, newestThere: () -> Timestamp) -> Timestamp? {
        guard baseIsCertain, other.tombstones[present.group.uuid] == nil, let ancestor = base?.groups[present.group.uuid],
              ancestor.parent == present.parent,
              !GroupProperty.all.contains(where: { $0.differs(ancestor.group, present.group) }) else { return nil }
        return Self.dropTime(after: Self.lastChange(of: present.group.times), newestThere: newestThere())
    }

    /// Whether `version` holds an edit made since `ancestor` (not older than it, and other content).
    static func edited(_ version: Entry, since ancestor: Entry) -> Bool {
        !EntryMerger.isSuperseded(version, by: ancestor) && !version.hasSameContent(as: ancestor)
    }

    static func lastChange(of times: Times) -> Timestamp {
        max(times.lastModified, times.locationChanged)
    }

    /// When a side dropped an object without saying when: its newest recorded change, and in any case
    /// after the object's last change (so the tombstone decides by KeePass's time rule too). The same
    /// from both merge directions.
    static func dropTime(after lastChange: Timestamp, newestThere: Timestamp) -> Timestamp {
        max(Timestamp(secondsSinceYearOne: lastChange.secondsSinceYearOne + 1), newestThere)
    }
}

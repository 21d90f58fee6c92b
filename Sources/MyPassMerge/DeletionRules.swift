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

    /// Entry `present`, which `other` does not hold. With an ancestor: unchanged since it, deleted; a
    /// change newer than the deletion keeps it where that change left it (restored); an older change
    /// the deletion never saw sends it to the recycle bin with it. Without an ancestor, KeePass's time
    /// rule.
    func entry(_ present: VaultIndex.EntryRecord, absentFrom other: VaultIndex, newestThere: () -> Timestamp) -> Outcome {
        let ancestor = base?.entries[present.entry.uuid]
        // Edited or moved since the ancestor (also moved away and back, MERGE.md rule 14): a change the
        // deleting side never saw.
        let changed = ancestor.map {
            Self.edited(present.entry, since: $0.entry) || present.parent != $0.parent
                || present.entry.times.locationChanged > $0.entry.times.locationChanged
        } ?? false
        if let deletedAt = other.tombstones[present.entry.uuid] {
            guard ancestor != nil else {
                return deletedAt <= Self.lastChange(of: present.entry.times) ? .kept : .deleted(certainDropAt: nil)
            }
            return changed ? Self.keptAgainst(deletionAt: deletedAt, of: present) : .deleted(certainDropAt: nil)
        }
        guard baseIsCertain, let ancestor else { return .kept }  // Absence is not deletion.
        // Dropped without a tombstone from a certain base, timed from the version the dropping side
        // saw (the same time whichever device the drop reaches this entry through).
        let droppedAt = Self.dropTime(after: Self.lastChange(of: changed ? ancestor.entry.times : present.entry.times),
                                      newestThere: newestThere())
        return changed ? Self.keptAgainst(deletionAt: droppedAt, of: present) : .deleted(certainDropAt: droppedAt)
    }

    /// An entry changed since the ancestor, deleted at `deletedAt` on the other side (MERGE.md rule 7):
    /// a change newer than the deletion keeps it in place; an older one goes to the recycle bin.
    static func keptAgainst(deletionAt deletedAt: Timestamp, of present: VaultIndex.EntryRecord) -> Outcome {
        lastChange(of: present.entry.times) > deletedAt ? .kept : .keptInRecycleBin(deletedAt: deletedAt)
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

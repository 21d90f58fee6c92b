internal import Foundation
internal import MyPassCore

extension Entry {
    /// The same version of an entry: same modification time and content (history aside).
    func isSameVersion(as other: Entry) -> Bool {
        times.lastModified == other.times.lastModified && hasSameContent(as: other)
    }

    /// Whether this version is `earlier` or was made from it (holds it in its history).
    func isSameOrLater(than earlier: Entry) -> Bool {
        isSameVersion(as: earlier) || history.contains { $0.isSameVersion(as: earlier) }
    }

    /// Whether this version is `earlier` saved again later with no property changed: moved, or
    /// recycled by KeePassXC, which bumps the modification and location times and adds no history
    /// item. Location and times take no part in an entry's content.
    func isTouched(from earlier: Entry) -> Bool {
        times.lastModified > earlier.times.lastModified && hasSameContent(as: earlier)
    }
}

/// A version of an entry as a set or dictionary key: equal exactly when `isSameVersion` (same time
/// and content), hashed by UUID, time and content (`contentHashValue`), so that versions sharing a
/// time — a history of thousands of items of one second — fall into buckets of their own instead of
/// one bucket compared item by item (which made a 10 KB copy cost a minute of merging).
struct VersionKey: Hashable {
    let version: Entry
    private let contentHash: Int

    init(_ version: Entry) {
        self.version = version
        contentHash = version.contentHashValue
    }

    var time: Timestamp { version.times.lastModified }

    static func == (lhs: VersionKey, rhs: VersionKey) -> Bool {
        lhs.contentHash == rhs.contentHash && lhs.version.isSameVersion(as: rhs.version)
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(version.uuid)
        hasher.combine(version.times.lastModified)
        hasher.combine(contentHash)
    }
}

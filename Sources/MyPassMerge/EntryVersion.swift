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
}

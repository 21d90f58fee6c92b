internal import Foundation
internal import MyPassCore

extension Entry {
    /// The same version of an entry: same modification time and content (history aside).
    func isSameVersion(as other: Entry) -> Bool {
        times.lastModified == other.times.lastModified && contentDigest == other.contentDigest
    }
}

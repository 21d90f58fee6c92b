internal import Foundation

/// A file's modification time, as `stat` gives it (`timespec`).
public struct FileTime: Sendable, Hashable, Comparable, Codable {
    /// Whole seconds since the epoch.
    public let seconds: Int64
    /// Nanoseconds within the second.
    public let nanoseconds: Int64

    /// A time of `seconds` and `nanoseconds`.
    public init(seconds: Int64, nanoseconds: Int64) {
        self.seconds = seconds
        self.nanoseconds = nanoseconds
    }

    /// Earlier first.
    public static func < (a: FileTime, b: FileTime) -> Bool { (a.seconds, a.nanoseconds) < (b.seconds, b.nanoseconds) }
}

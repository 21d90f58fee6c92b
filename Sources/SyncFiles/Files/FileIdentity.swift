internal import Foundation

/// What tells one file apart from every other, whatever its name: a sync engine that renames the
/// vault aside (rclone bisync) leaves this device's file under a copy's name, and only its identity
/// says it is the same file. Inode numbers alone do not: a file system hands a freed inode to the
/// next new file at once (a copy that arrives right after the vault was deleted). Size and
/// modification time do not either: rclone gives a copy it transfers the source's time, so the
/// copy of this device's own version that comes back from elsewhere matches both. So the birth
/// time decides, and where the file system keeps none, no file is known to be another.
public struct FileIdentity: Sendable, Hashable, Codable {
    /// The device the file is on.
    public let device: UInt64
    /// Its inode.
    public let inode: UInt64
    /// When it was created (nil: the file system keeps no birth time).
    public let born: FileTime?
    /// Its size in bytes.
    public let size: Int64
    /// Its modification time.
    public let modified: FileTime

    /// The identity of these values.
    public init(device: UInt64, inode: UInt64, born: FileTime?, size: Int64, modified: FileTime) {
        self.device = device
        self.inode = inode
        self.born = born
        self.size = size
        self.modified = modified
    }

    /// The identity of the file at `path` on `fileSystem` as it is now (a symlink itself), from one `statx` call;
    /// nil when it cannot be examined.
    public static func of(_ path: String, on fileSystem: FileSystem) -> FileIdentity? {
        SystemCalls.identity(atPath: path, on: fileSystem)?.identity
    }

    /// Whether `other` is this very file (perhaps under another name): same inode on the same device,
    /// born at the same time. Without birth times: not known, so false.
    public func isSameFile(as other: FileIdentity) -> Bool {
        guard device == other.device && inode == other.inode, let born, let otherBorn = other.born else { return false }
        return born == otherBorn
    }
}

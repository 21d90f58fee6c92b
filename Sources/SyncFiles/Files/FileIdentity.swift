internal import Foundation

/// What tells one file apart from every other, whatever its name: a sync engine that renames the
/// vault aside (rclone bisync) leaves this device's file under a copy's name, and only its identity
/// says it is the same file. Inode numbers alone do not: a file system hands a freed inode to the
/// next new file at once (a copy that arrives right after the vault was deleted). So the birth time
/// counts too, and where the file system keeps none, the size and modification time (a rename
/// keeps both).
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

    /// The identity of the file at `path` as it is now (a symlink itself); nil when it cannot be examined.
    public static func of(_ path: String) -> FileIdentity? {
        guard let status = SystemCalls.status(atPath: path) else { return nil }
        return FileIdentity(device: status.device, inode: status.inode, born: SystemCalls.birthTime(atPath: path), size: status.size,
                            modified: status.modified)
    }

    /// Whether `other` is this very file (perhaps under another name): same inode on the same device,
    /// born at the same time (or, without birth times, of the same size and modification time).
    public func isSameFile(as other: FileIdentity) -> Bool {
        guard device == other.device && inode == other.inode else { return false }
        if let born, let otherBorn = other.born { return born == otherBorn }
        return size == other.size && modified == other.modified
    }
}

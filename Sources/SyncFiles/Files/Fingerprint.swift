internal import Foundation
internal import MyPassCrypto
#if canImport(Glibc)
internal import Glibc
#endif

/// What identifies one version of a file on disk: device, inode, size, modification time and the
/// SHA-256 of its bytes. A save compares it just before replacing the file.
public struct Fingerprint: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The device the file is on.
    public var device: UInt64
    /// The file's inode (a rename in keeps the new file's).
    public var inode: UInt64
    /// The size in bytes.
    public var size: Int64
    /// The modification time: whole seconds.
    public var modifiedSeconds: Int64
    /// The modification time: nanoseconds within the second.
    public var modifiedNanoseconds: Int64
    /// Lowercase hex SHA-256 of the whole file.
    public var sha256: String

    /// A fingerprint of these parts (a test's file that is not on disk).
    init(device: UInt64, inode: UInt64, size: Int64, modifiedSeconds: Int64, modifiedNanoseconds: Int64, sha256: String) {
        self.device = device
        self.inode = inode
        self.size = size
        self.modifiedSeconds = modifiedSeconds
        self.modifiedNanoseconds = modifiedNanoseconds
        self.sha256 = sha256
    }

    /// The fingerprint of `bytes` read from a file whose `lstat` was `status`.
    init(status: FileStatus, bytes: Data) {
        device = status.device
        inode = status.inode
        size = status.size
        modifiedSeconds = status.modified.seconds
        modifiedNanoseconds = status.modified.nanoseconds
        sha256 = SHA256.hexHash(bytes)
    }

    /// The fingerprint of `bytes` read from a file whose `stat` was `status`.
    init(status: stat, bytes: Data) {
        self.init(status: status, sha256: SHA256.hexHash(bytes))
    }

    /// The fingerprint of a file whose `stat` was `status` and whose bytes hash to `sha256` (lowercase hex).
    init(status: stat, sha256: String) {
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
        size = Int64(status.st_size)
        modifiedSeconds = Int64(status.st_mtim.tv_sec)
        modifiedNanoseconds = Int64(status.st_mtim.tv_nsec)
        self.sha256 = sha256
    }

    /// Whether `other` is the same content (the hash decides; metadata may differ after a copy).
    public func sameContent(as other: Fingerprint) -> Bool { sha256 == other.sha256 && size == other.size }

    /// A short form for messages: inode, size, the hash's start.
    public var description: String { "inode \(inode), \(size) bytes, sha256 \(sha256.prefix(12))…" }
}

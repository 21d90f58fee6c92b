public import Foundation
internal import MyPassCrypto

/// The identity of an attachment's content: the SHA-256 of its bytes. Equal content, one copy.
public struct BinaryID: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Lowercase hex SHA-256 of the content.
    public let sha256: String

    /// The identity of bytes whose SHA-256 is `sha256` (lowercase hex).
    public init(sha256: String) {
        self.sha256 = sha256
    }

    /// The identity of `data`.
    public init(of data: Data) {
        sha256 = SHA256.hexHash(data)
    }

    /// The hash.
    public var description: String { sha256 }

    /// Ordered by hash (a stable order for writing).
    public static func < (lhs: BinaryID, rhs: BinaryID) -> Bool { lhs.sha256 < rhs.sha256 }
}

/// One pooled attachment content and KeePass's protect flag for it.
public struct PooledBinary: Sendable, Hashable {
    /// The attachment's bytes.
    public var data: Data
    /// Whether the file marks it protected (kept on a re-save).
    public var isProtected: Bool

    /// A pooled attachment.
    public init(data: Data, isProtected: Bool) {
        self.data = data
        self.isProtected = isProtected
    }
}

/// The vault's attachment contents, addressed by content: entries (and their history) refer to
/// them by `BinaryID`, so the same file attached twice is stored once, and a merge of two vaults
/// needs no renumbering.
public struct BinaryPool: Sendable, Hashable {
    /// Every attachment's bytes, once each.
    public private(set) var binaries: [BinaryID: PooledBinary] = [:]

    /// An empty pool.
    public init() {}

    /// Adds `data` (once) and returns its identity. A protected copy keeps the pool entry protected.
    @discardableResult
    public mutating func add(_ data: Data, isProtected: Bool) -> BinaryID {
        let id = BinaryID(of: data)
        if let existing = binaries[id] {
            if isProtected && !existing.isProtected { binaries[id]?.isProtected = true }
        } else {
            binaries[id] = PooledBinary(data: data, isProtected: isProtected)
        }
        return id
    }

    /// The content for `id`.
    public subscript(id: BinaryID) -> PooledBinary? { binaries[id] }

    /// Marks every content unprotected (as a KDBX 3.1 file written here reads back).
    public mutating func clearProtectionFlags() {
        for id in binaries.keys { binaries[id]?.isProtected = false }
    }

    /// Keeps only the binaries whose identities are in `used`.
    public mutating func retainOnly(_ used: Set<BinaryID>) {
        binaries = binaries.filter { used.contains($0.key) }
    }

    /// Identities in a stable order (for writing).
    public var sortedIDs: [BinaryID] { binaries.keys.sorted() }
}

/// An attachment of an entry: a name and the pooled content it refers to.
public struct Attachment: Sendable, Hashable {
    /// The attachment's file name in the entry.
    public var name: String
    /// Its bytes in the vault's pool.
    public var binary: BinaryID

    /// An attachment named `name` of the pooled bytes `binary`.
    public init(name: String, binary: BinaryID) {
        self.name = name
        self.binary = binary
    }
}

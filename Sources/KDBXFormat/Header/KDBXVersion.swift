/// A KDBX container version (major.minor) as stored after the signatures.
public struct KDBXVersion: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The major version (3 or 4).
    public let major: UInt16
    /// The minor version.
    public let minor: UInt16

    /// The version `major.minor`.
    public init(major: UInt16, minor: UInt16) {
        self.major = major
        self.minor = minor
    }

    /// KDBX 3.1: KeePass 2.x before 2.35; what `keepassxc-cli db-create` writes.
    public static let v3_1 = KDBXVersion(major: 3, minor: 1)
    /// KDBX 4.0: KDF parameters, HMAC block stream, inner header.
    public static let v4_0 = KDBXVersion(major: 4, minor: 0)
    /// KDBX 4.1: adds PreviousParentGroup, group tags, custom-data modification times.
    public static let v4_1 = KDBXVersion(major: 4, minor: 1)

    /// KDBX 2.x (KeePass 2.0x) is read but never written: a save writes it back as 3.1.
    public var isWritten: Bool { major >= 3 }

    /// Whether this is a KDBX 4.x file (VariantDictionary KDF, HMAC blocks, inner header).
    public var isKDBX4: Bool { major == 4 }

    /// Whether attachments carry their protection flag (KDBX 4's inner header). A 3.1 file written
    /// here keeps none, as KeePassXC writes them: `<Binary Protected="True">` is XORed with the inner
    /// stream, which readers that unprotect only `Value` elements (pykeepass) do not expect, so every
    /// later password of the file would read as garbage. The contents stay encrypted with the payload;
    /// the flag only asks a reader to keep them protected in memory.
    public var keepsAttachmentProtection: Bool { isKDBX4 }

    /// `major.minor`.
    public var description: String { "\(major).\(minor)" }

    /// Ordered by major, then minor.
    public static func < (lhs: KDBXVersion, rhs: KDBXVersion) -> Bool {
        (lhs.major, lhs.minor) < (rhs.major, rhs.minor)
    }
}

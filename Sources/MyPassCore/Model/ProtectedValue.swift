internal import MyPassCrypto

/// A secret string (a password, a protected custom field) kept masked in memory
/// (`MemoryMask`) and revealed only by `reveal()`. Never shown by `description`.
public struct ProtectedValue: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    private let masked: [UInt8]
    private let nonce: UInt64
    /// A keyed digest of the plain text (`MemoryMask.keyedDigest`): equality without unmasking.
    private let digestHigh: UInt64
    private let digestLow: UInt64

    /// Masks `plainText`.
    public init(_ plainText: String) {
        self.init(maskingUTF8: Array(plainText.utf8))
    }

    /// Masks the UTF-8 bytes `plainBytes` in place (the caller's array is consumed, no copy is left).
    public init(maskingUTF8 plainBytes: consuming [UInt8]) {
        var bytes = plainBytes
        (digestHigh, digestLow) = MemoryMask.keyedDigest(of: bytes)
        let nonce = MemoryMask.nextNonce()
        MemoryMask.apply(to: &bytes, nonce: nonce)
        self.masked = bytes
        self.nonce = nonce
    }

    /// The plain text. Callers keep it only as long as they need it.
    public func reveal() -> String {
        var bytes = masked
        MemoryMask.apply(to: &bytes, nonce: nonce)
        defer { MemoryMask.wipe(&bytes) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Calls `body` with the plain UTF-8 bytes in a scratch array it may change (a writer masks them
    /// in place for the file), wiped afterwards: no `String` copy of the secret is made.
    public func withRevealedBytes<Result, Failure: Error>(_ body: (inout [UInt8]) throws(Failure) -> Result) throws(Failure) -> Result {
        var bytes = masked
        MemoryMask.apply(to: &bytes, nonce: nonce)
        defer { MemoryMask.wipe(&bytes) }
        return try body(&bytes)
    }

    /// The value's UTF-8 length in bytes (not secret: KeePass's HistoryMaxSize counts it).
    public var utf8Count: Int { masked.count }

    /// Whether the value is the empty string.
    public var isEmpty: Bool { masked.isEmpty }

    /// Never the value.
    public var description: String { "ProtectedValue(hidden)" }
    /// Never the value.
    public var debugDescription: String { description }
}

extension ProtectedValue: Equatable, Hashable {
    /// Compares the keyed digests of the plain texts (a 128-bit keyed BLAKE2b), without unmasking.
    public static func == (lhs: ProtectedValue, rhs: ProtectedValue) -> Bool {
        lhs.masked.count == rhs.masked.count && (lhs.digestHigh ^ rhs.digestHigh) | (lhs.digestLow ^ rhs.digestLow) == 0
    }

    /// Hashes the keyed digest (which reveals nothing without the process's key).
    public func hash(into hasher: inout Hasher) {
        hasher.combine(digestHigh)
        hasher.combine(digestLow)
    }
}

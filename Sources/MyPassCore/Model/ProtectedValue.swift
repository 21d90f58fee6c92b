internal import MyPassCrypto

/// A secret string (a password, a protected custom field) kept masked in memory
/// (`MemoryMask`) and revealed only by `reveal()`. Never shown by `description`.
///
/// One reference wide: the masked bytes, their nonce and the keyed digest share one allocation
/// (`MaskedBytes`), so a field holding a protected value is no wider than one holding a string.
/// Unchecked: `MaskedBytes` (a `ManagedBuffer`, which the compiler never sees as Sendable) is never changed after it is made.
public struct ProtectedValue: @unchecked Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    private let storage: MaskedBytes

    /// Masks `plainText`.
    public init(_ plainText: String) {
        self.init(maskingUTF8: Array(plainText.utf8))
    }

    /// Masks the UTF-8 bytes `plainBytes` (the caller's array is consumed and wiped, no copy is left).
    public init(maskingUTF8 plainBytes: consuming [UInt8]) {
        self.init(maskingUTF8: plainBytes, reusing: nil)
    }

    /// `candidate` itself when it holds the UTF-8 text `plainBytes` (compared by keyed digest, as
    /// `==` does), so equal values share one storage; else a new value masking `plainBytes`. The
    /// caller's array is consumed and wiped either way.
    public init(maskingUTF8 plainBytes: consuming [UInt8], reusing candidate: ProtectedValue?) {
        var bytes = plainBytes
        self = bytes.withUnsafeBufferPointer { ProtectedValue(maskingUTF8: $0, reusing: candidate) }
        MemoryMask.wipe(&bytes)
    }

    /// `candidate` itself when it holds the UTF-8 text in `plainBytes`, else a new value whose
    /// storage is the only copy of them made, masked in place there (the caller wipes its buffer).
    package init(maskingUTF8 plainBytes: UnsafeBufferPointer<UInt8>, reusing candidate: ProtectedValue?) {
        let digest = MemoryMask.keyedDigest(of: plainBytes)
        if let candidate, candidate.storage.header.count == plainBytes.count,
           candidate.storage.header.digestHigh == digest.0, candidate.storage.header.digestLow == digest.1 {
            self = candidate
        } else {
            storage = MaskedBytes.masking(plainBytes, digest: digest)
        }
    }

    /// The plain text. Callers keep it only as long as they need it.
    public func reveal() -> String {
        withRevealedBytes { String(decoding: $0, as: UTF8.self) }
    }

    /// Calls `body` with the plain UTF-8 bytes in a scratch array it may change (a writer masks them
    /// in place for the file), wiped afterwards: no `String` copy of the secret is made.
    public func withRevealedBytes<Result, Failure: Error>(_ body: (inout [UInt8]) throws(Failure) -> Result) throws(Failure) -> Result {
        var bytes = storage.maskedCopy()
        MemoryMask.apply(to: &bytes, nonce: storage.header.nonce)
        defer { MemoryMask.wipe(&bytes) }
        return try body(&bytes)
    }

    /// The bytes as they sit in memory, still masked (tests check they are not the plain text).
    var maskedBytes: [UInt8] { storage.maskedCopy() }

    /// The value's UTF-8 length in bytes (not secret: KeePass's HistoryMaxSize counts it).
    public var utf8Count: Int { storage.header.count }

    /// Whether the value is the empty string.
    public var isEmpty: Bool { storage.header.count == 0 }

    /// Never the value.
    public var description: String { "ProtectedValue(hidden)" }
    /// Never the value.
    public var debugDescription: String { description }
}

extension ProtectedValue: Equatable, Hashable {
    /// Compares the lengths and keyed digests of the plain texts (128-bit SipHash), without unmasking.
    public static func == (lhs: ProtectedValue, rhs: ProtectedValue) -> Bool {
        if lhs.storage === rhs.storage { return true }
        let left = lhs.storage.header, right = rhs.storage.header
        return left.count == right.count && (left.digestHigh ^ right.digestHigh) | (left.digestLow ^ right.digestLow) == 0
    }

    /// Hashes the keyed digest (which reveals nothing without the process's key).
    public func hash(into hasher: inout Hasher) {
        hasher.combine(storage.header.digestHigh)
        hasher.combine(storage.header.digestLow)
    }
}

/// The masked bytes of one protected value, tail-allocated after their length, nonce and keyed
/// digest. Immutable once made, hence shareable across threads.
private final class MaskedBytes: ManagedBuffer<MaskedBytes.Header, UInt8> {
    struct Header {
        let count: Int
        let nonce: UInt64
        let digestHigh: UInt64
        let digestLow: UInt64
    }

    /// A buffer holding `plain` masked with a new nonce: the plain bytes are copied in, then masked in place.
    static func masking(_ plain: UnsafeBufferPointer<UInt8>, digest: (UInt64, UInt64)) -> MaskedBytes {
        let nonce = MemoryMask.nextNonce()
        let made = create(minimumCapacity: plain.count) { _ in
            Header(count: plain.count, nonce: nonce, digestHigh: digest.0, digestLow: digest.1)
        }
        let buffer = unsafeDowncast(made, to: MaskedBytes.self)
        buffer.withUnsafeMutablePointerToElements { elements in
            guard let base = plain.baseAddress, plain.count > 0 else { return }
            elements.initialize(from: base, count: plain.count)
            MemoryMask.apply(to: UnsafeMutableBufferPointer(start: elements, count: plain.count), nonce: nonce)
        }
        return buffer
    }

    /// A copy of the masked bytes (still masked).
    func maskedCopy() -> [UInt8] {
        let count = header.count
        return withUnsafeMutablePointerToElements { elements in
            [UInt8](unsafeUninitializedCapacity: count) { target, initialized in
                if count > 0 { target.baseAddress!.initialize(from: elements, count: count) }
                initialized = count
            }
        }
    }
}

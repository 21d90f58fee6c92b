public import Foundation
internal import CGcrypt

/// SHA-256 (FIPS 180-4), from libgcrypt (see `GcryptDigest`).
public enum SHA256 {
    /// Digest length in bytes.
    public static let byteCount = 32

    /// The digest of `message`, for values that are not secret (file fingerprints, header hashes).
    public static func hash(_ message: some ContiguousBytes) -> Data {
        var hasher = SHA2Hasher(.sha256)
        hasher.update(message)
        return hasher.finalize()
    }

    /// The digest of `message` as lowercase hex (64 characters), or its first `prefix` bytes' hex.
    public static func hexHash(_ message: some ContiguousBytes, prefix: Int = 32) -> String {
        hex(hash(message).prefix(prefix))
    }

    /// `digest` (a hash computed in pieces with `SHA2Hasher`) as lowercase hex.
    public static func hex(_ digest: Data) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(digest.count * 2)
        for byte in digest {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The digest of `message` kept in secure memory (composite keys, master keys).
    public static func secureHash(_ message: some ContiguousBytes) -> SecureBytes {
        var hasher = SHA2Hasher(.sha256)
        hasher.update(message)
        return hasher.finalizeSecure()
    }
}

/// SHA-512 (FIPS 180-4), from libgcrypt.
public enum SHA512 {
    /// Digest length in bytes.
    public static let byteCount = 64

    /// The digest of `message`, for values that are not secret.
    public static func hash(_ message: some ContiguousBytes) -> Data {
        var hasher = SHA2Hasher(.sha512)
        hasher.update(message)
        return hasher.finalize()
    }

    /// The digest of `message` kept in secure memory (HMAC keys, inner stream keys).
    public static func secureHash(_ message: some ContiguousBytes) -> SecureBytes {
        var hasher = SHA2Hasher(.sha512)
        hasher.update(message)
        return hasher.finalizeSecure()
    }
}

/// Incremental SHA-256 or SHA-512 over several pieces of input (a header, a block stream, a file).
public struct SHA2Hasher: ~Copyable {
    /// Which member of the SHA-2 family to compute.
    public enum Variant: Sendable {
        case sha256, sha512

        /// Digest length in bytes.
        public var byteCount: Int { self == .sha256 ? SHA256.byteCount : SHA512.byteCount }
    }

    /// The function this hasher computes.
    public let variant: Variant
    private var digest: GcryptDigest

    /// A fresh hasher for `variant`.
    public init(_ variant: Variant) {
        self.variant = variant
        digest = GcryptDigest(algorithm: Int32(variant == .sha256 ? GCRY_MD_SHA256.rawValue : GCRY_MD_SHA512.rawValue))
    }

    /// Adds `bytes` to the message.
    public mutating func update(_ bytes: some ContiguousBytes) {
        bytes.withUnsafeBytes { digest.update($0) }
    }

    /// The digest of everything added; consumes the hasher.
    public consuming func finalize() -> Data {
        var output = Data(count: variant.byteCount)
        output.withUnsafeMutableBytes { digest.finish(into: $0) }
        return output
    }

    /// The digest of everything added, in secure memory; consumes the hasher.
    public consuming func finalizeSecure() -> SecureBytes {
        var output = SecureBytes(count: variant.byteCount)
        output.withUnsafeMutableBytes { digest.finish(into: $0) }
        return output
    }
}

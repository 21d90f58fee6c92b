public import Foundation
internal import CSodium

/// SHA-256 (FIPS 180-4), from libsodium.
public enum SHA256 {
    /// Digest length in bytes.
    public static let byteCount = 32

    /// The digest of `message`, for values that are not secret (file fingerprints, header hashes).
    public static func hash(_ message: some ContiguousBytes) -> Data {
        var hasher = SHA2Hasher(.sha256)
        hasher.update(message)
        return hasher.finalize()
    }

    /// The digest of `message` kept in secure memory (composite keys, master keys).
    public static func secureHash(_ message: some ContiguousBytes) -> SecureBytes {
        var hasher = SHA2Hasher(.sha256)
        hasher.update(message)
        return hasher.finalizeSecure()
    }
}

/// SHA-512 (FIPS 180-4), from libsodium.
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
    private var state256 = crypto_hash_sha256_state()
    private var state512 = crypto_hash_sha512_state()

    /// A fresh hasher for `variant`.
    public init(_ variant: Variant) {
        // The hash functions need no library initialisation; this only keeps the order uniform.
        try? CryptoLibraries.ensureInitialized()
        self.variant = variant
        switch variant {
        case .sha256: crypto_hash_sha256_init(&state256)
        case .sha512: crypto_hash_sha512_init(&state512)
        }
    }

    /// Adds `bytes` to the message.
    public mutating func update(_ bytes: some ContiguousBytes) {
        bytes.withUnsafeBytes { buffer in
            let pointer = buffer.bindMemory(to: UInt8.self).baseAddress
            switch variant {
            case .sha256: _ = crypto_hash_sha256_update(&state256, pointer, UInt64(buffer.count))
            case .sha512: _ = crypto_hash_sha512_update(&state512, pointer, UInt64(buffer.count))
            }
        }
    }

    /// The digest of everything added; consumes the hasher.
    public consuming func finalize() -> Data {
        var digest = Data(count: variant.byteCount)
        digest.withUnsafeMutableBytes { finish(into: $0) }
        return digest
    }

    /// The digest of everything added, in secure memory; consumes the hasher.
    public consuming func finalizeSecure() -> SecureBytes {
        var digest = SecureBytes(count: variant.byteCount)
        digest.withUnsafeMutableBytes { finish(into: $0) }
        return digest
    }

    private mutating func finish(into output: UnsafeMutableRawBufferPointer) {
        let pointer = output.bindMemory(to: UInt8.self).baseAddress!
        switch variant {
        case .sha256: _ = crypto_hash_sha256_final(&state256, pointer)
        case .sha512: _ = crypto_hash_sha512_final(&state512, pointer)
        }
        sodium_memzero(&state256, MemoryLayout<crypto_hash_sha256_state>.size)
        sodium_memzero(&state512, MemoryLayout<crypto_hash_sha512_state>.size)
    }
}

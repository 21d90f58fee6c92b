internal import Foundation
internal import CSodium
internal import Synchronization

/// Keeps protected values unreadable in memory: each value is XORed with its own slice of a
/// ChaCha20 keystream under a per-process random key, and unmasked only on demand.
///
/// A memory dump or a stray `print` shows the masked bytes, never the value; the key itself sits in
/// locked, wiped-on-exit memory.
public enum MemoryMask {
    private static let key: SecureBytes = {
        // Failure to get random bytes leaves a zero key: values are then merely obfuscated, not lost.
        (try? SecureBytes(randomCount: 32)) ?? SecureBytes(count: 32)
    }()
    private static let counter = Atomic<UInt64>(1)

    /// A nonce never used before in this process.
    public static func nextNonce() -> UInt64 {
        counter.add(1, ordering: .relaxed).oldValue
    }

    /// XORs `bytes` with the keystream for `nonce` (masks plain bytes, unmasks masked ones).
    public static func apply(to bytes: inout [UInt8], nonce: UInt64) {
        guard !bytes.isEmpty else { return }
        bytes.withUnsafeMutableBufferPointer { apply(to: $0, nonce: nonce) }
    }

    /// XORs the bytes of `buffer` in place with the keystream for `nonce`.
    public static func apply(to buffer: UnsafeMutableBufferPointer<UInt8>, nonce: UInt64) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        // The 96-bit IETF nonce: the 64-bit counter value, little-endian, then zeros (on the stack).
        var nonceBytes: (UInt64, UInt32) = (nonce.littleEndian, 0)
        withUnsafeBytes(of: &nonceBytes) { nonceBuffer in
            key.withUnsafeBytes { keyBytes in
                _ = crypto_stream_chacha20_ietf_xor_ic(
                    base, base, UInt64(buffer.count),
                    nonceBuffer.bindMemory(to: UInt8.self).baseAddress!, 0, keyBytes.bindMemory(to: UInt8.self).baseAddress!)
            }
        }
    }

    /// The key of `keyedDigest`, separate from the masking key.
    private static let digestKey: SecureBytes = {
        (try? SecureBytes(randomCount: Int(crypto_shorthash_siphashx24_KEYBYTES))) ?? SecureBytes(count: Int(crypto_shorthash_siphashx24_KEYBYTES))
    }()

    /// A 128-bit keyed digest of `bytes` (SipHash-2-4 with 128-bit output, a pseudorandom function
    /// under this process's random digest key): equal values give equal digests, and without the
    /// key (never stored) the digest says nothing about the value. SipHash rather than a keyed
    /// BLAKE2b because a vault has a digest per protected value of every version: for these short
    /// inputs it is several times cheaper.
    public static func keyedDigest(of bytes: [UInt8]) -> (UInt64, UInt64) {
        bytes.withUnsafeBufferPointer { keyedDigest(of: $0) }
    }

    /// `keyedDigest` of the bytes `input` points at.
    public static func keyedDigest(of input: UnsafeBufferPointer<UInt8>) -> (UInt64, UInt64) {
        var output: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &output) { outputBuffer in
            digestKey.withUnsafeBytes { keyBytes in
                _ = crypto_shorthash_siphashx24(outputBuffer.bindMemory(to: UInt8.self).baseAddress!, input.baseAddress, UInt64(input.count),
                                                keyBytes.bindMemory(to: UInt8.self).baseAddress!)
            }
        }
        return output
    }

    /// Overwrites `bytes` with zeros in a way the compiler does not remove.
    public static func wipe(_ bytes: inout [UInt8]) {
        guard !bytes.isEmpty else { return }
        bytes.withUnsafeMutableBytes { wipe($0) }
    }

    /// Overwrites the bytes of `buffer` with zeros in a way the compiler does not remove.
    public static func wipe(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        sodium_memzero(base, buffer.count)
    }
}

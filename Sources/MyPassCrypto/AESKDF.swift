public import Foundation

/// KeePass's AES key transformation ("AES-KDF"): the 32-byte composite key encrypted `rounds` times
/// with AES-256-ECB under a 32-byte seed, then hashed with SHA-256 (libgcrypt, libsodium).
public enum AESKDF {
    /// The transformed key: SHA-256(AES-256-ECB_seed^rounds(compositeKey)).
    public static func deriveKey(
        from compositeKey: SecureBytes, seed: some ContiguousBytes, rounds: UInt64
    ) throws(CryptoError) -> SecureBytes {
        guard compositeKey.count == 32 else {
            throw .invalidKeySize(expected: 32, actual: compositeKey.count)
        }
        let seedKey = SecureBytes(seed)
        guard seedKey.count == 32 else {
            throw .invalidKeySize(expected: 32, actual: seedKey.count)
        }
        let context = try GcryptCipher(.aes256, mode: .ecb, key: seedKey)
        var transformed = compositeKey
        let result: Result<Void, CryptoError> = transformed.withUnsafeMutableBytes { bytes in
            Result { () throws(CryptoError) in try context.encryptRepeatedly(inPlace: bytes, rounds: rounds) }
        }
        try result.get()
        return SHA256.secureHash(transformed)
    }
}

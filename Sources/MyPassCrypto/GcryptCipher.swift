internal import CGcrypt
internal import Foundation

/// Owns one libgcrypt cipher handle (`gcry_cipher_hd_t`) and closes it in `deinit`.
///
/// The backend of `CBC`, `ECB` and `AESKDF`; not shared between threads.
final class GcryptCipher {
    /// Chaining modes used by KDBX.
    enum Mode {
        case cbc, ecb

        var gcryptMode: Int32 {
            switch self {
            case .cbc: Int32(GCRY_CIPHER_MODE_CBC.rawValue)
            case .ecb: Int32(GCRY_CIPHER_MODE_ECB.rawValue)
            }
        }
    }

    private let handle: gcry_cipher_hd_t

    /// Opens a context for `cipher` in `mode` keyed with `key`.
    init(_ cipher: BlockCipher, mode: Mode, key: SecureBytes) throws(CryptoError) {
        try CryptoLibraries.ensureInitialized()
        guard key.count == cipher.keySize else {
            throw .invalidKeySize(expected: cipher.keySize, actual: key.count)
        }
        var opened: gcry_cipher_hd_t?
        try Self.check(gcry_cipher_open(&opened, cipher.gcryptAlgorithm, mode.gcryptMode, 0), "gcry_cipher_open")
        guard let opened else {
            throw .libraryFailure(library: "libgcrypt", function: "gcry_cipher_open", code: -1, message: "no handle")
        }
        handle = opened
        let status = key.withUnsafeBytes { gcry_cipher_setkey(opened, $0.baseAddress, $0.count) }
        try Self.check(status, "gcry_cipher_setkey")
    }

    deinit {
        gcry_cipher_close(handle)
    }

    /// A CBC context for `cipher` keyed with `key`, starting from `iv` (one block).
    static func cbc(_ cipher: BlockCipher, key: SecureBytes, iv: some ContiguousBytes) throws(CryptoError) -> GcryptCipher {
        let context = try GcryptCipher(cipher, mode: .cbc, key: key)
        let ivResult: Result<Void, CryptoError> = iv.withUnsafeBytes { ivBytes in
            guard ivBytes.count == cipher.blockSize else {
                return .failure(.invalidNonceSize(expected: cipher.blockSize, actual: ivBytes.count))
            }
            return Result { () throws(CryptoError) in try context.setIV(ivBytes) }
        }
        try ivResult.get()
        return context
    }

    /// Sets the IV for the next CBC operation.
    func setIV(_ iv: UnsafeRawBufferPointer) throws(CryptoError) {
        try Self.check(gcry_cipher_setiv(handle, iv.baseAddress, iv.count), "gcry_cipher_setiv")
    }

    /// Encrypts whole blocks in place.
    func encrypt(inPlace buffer: UnsafeMutableRawBufferPointer) throws(CryptoError) {
        guard buffer.count > 0 else { return }
        try Self.check(gcry_cipher_encrypt(handle, buffer.baseAddress, buffer.count, nil, 0), "gcry_cipher_encrypt")
    }

    /// Decrypts whole blocks in place.
    func decrypt(inPlace buffer: UnsafeMutableRawBufferPointer) throws(CryptoError) {
        guard buffer.count > 0 else { return }
        try Self.check(gcry_cipher_decrypt(handle, buffer.baseAddress, buffer.count, nil, 0), "gcry_cipher_decrypt")
    }

    /// Encrypts the same buffer `rounds` times in place (the AES-KDF loop), without per-round overhead
    /// beyond one library call.
    func encryptRepeatedly(inPlace buffer: UnsafeMutableRawBufferPointer, rounds: UInt64) throws(CryptoError) {
        let base = buffer.baseAddress
        let length = buffer.count
        var remaining = rounds
        while remaining > 0 {
            let status = gcry_cipher_encrypt(handle, base, length, nil, 0)
            if status != 0 { try Self.check(status, "gcry_cipher_encrypt") }
            remaining -= 1
        }
    }

    private static func check(_ status: gcry_error_t, _ function: String) throws(CryptoError) {
        guard status != 0 else { return }
        let message = gcry_strerror(status).map { String(cString: $0) } ?? "unknown error"
        throw .libraryFailure(library: "libgcrypt", function: function, code: Int32(bitPattern: status), message: message)
    }
}

extension BlockCipher {
    var gcryptAlgorithm: Int32 {
        switch self {
        case .aes256: Int32(GCRY_CIPHER_AES256.rawValue)
        case .twofish256: Int32(GCRY_CIPHER_TWOFISH.rawValue)
        }
    }
}

public import Foundation

/// The 128-bit block ciphers KDBX uses for its payload, both with 256-bit keys (libgcrypt).
public enum BlockCipher: Sendable, CaseIterable {
    /// AES-256 (FIPS 197).
    case aes256
    /// Twofish with a 256-bit key.
    case twofish256

    /// Block length in bytes.
    public var blockSize: Int { 16 }
    /// Key length in bytes.
    public var keySize: Int { 32 }
}

/// How the last block of a CBC message is filled.
public enum BlockPadding: Sendable {
    /// PKCS#7: 1 to 16 bytes each holding the pad length (what KDBX uses).
    case pkcs7
    /// No padding: the input must be whole blocks.
    case none
}

/// Cipher-block chaining (NIST SP 800-38A) with AES-256 or Twofish.
public enum CBC {
    /// Encrypts `plaintext`, padding it as `padding` says.
    public static func encrypt(
        _ plaintext: some ContiguousBytes, cipher: BlockCipher, key: SecureBytes,
        iv: some ContiguousBytes, padding: BlockPadding = .pkcs7
    ) throws(CryptoError) -> Data {
        var buffer = plaintext.withUnsafeBytes { Data($0) }
        guard padding == .none else {
            try encrypt(inPlace: &buffer, cipher: cipher, key: key, iv: iv)
            return buffer
        }
        try transform(&buffer, cipher: cipher, key: key, iv: iv, encrypting: true)
        return buffer
    }

    /// Pads `buffer` (PKCS#7) and encrypts it in place: a payload of many megabytes is held once,
    /// not twice.
    public static func encrypt(
        inPlace buffer: inout Data, cipher: BlockCipher, key: SecureBytes, iv: some ContiguousBytes
    ) throws(CryptoError) {
        let padLength = cipher.blockSize - buffer.count % cipher.blockSize
        buffer.append(contentsOf: repeatElement(UInt8(padLength), count: padLength))
        try transform(&buffer, cipher: cipher, key: key, iv: iv, encrypting: true)
    }

    /// Decrypts `ciphertext` and removes the padding; `.invalidPadding` usually means a wrong key.
    public static func decrypt(
        _ ciphertext: some ContiguousBytes, cipher: BlockCipher, key: SecureBytes,
        iv: some ContiguousBytes, padding: BlockPadding = .pkcs7
    ) throws(CryptoError) -> Data {
        var buffer = ciphertext.withUnsafeBytes { Data($0) }
        if padding == .pkcs7 && buffer.isEmpty {
            throw .invalidInputLength(blockSize: cipher.blockSize, actual: 0)
        }
        try transform(&buffer, cipher: cipher, key: key, iv: iv, encrypting: false)
        if padding == .pkcs7 {
            let padLength = try PKCS7.paddingLength(of: buffer, blockSize: cipher.blockSize)
            buffer.removeLast(padLength)
        }
        return buffer
    }

    /// Decrypts whole blocks of `buffer` in place, leaving any padding for the caller to check (a
    /// payload of many megabytes is then held once, not twice).
    public static func decrypt(
        inPlace buffer: inout Data, cipher: BlockCipher, key: SecureBytes, iv: some ContiguousBytes
    ) throws(CryptoError) {
        try transform(&buffer, cipher: cipher, key: key, iv: iv, encrypting: false)
    }

    private static func transform(
        _ buffer: inout Data, cipher: BlockCipher, key: SecureBytes,
        iv: some ContiguousBytes, encrypting: Bool
    ) throws(CryptoError) {
        guard buffer.count % cipher.blockSize == 0 else {
            throw .invalidInputLength(blockSize: cipher.blockSize, actual: buffer.count)
        }
        let context = try GcryptCipher.cbc(cipher, key: key, iv: iv)
        let result: Result<Void, CryptoError> = buffer.withUnsafeMutableBytes { bytes in
            Result { () throws(CryptoError) in
                if encrypting { try context.encrypt(inPlace: bytes) } else { try context.decrypt(inPlace: bytes) }
            }
        }
        try result.get()
    }
}

/// Electronic codebook mode: each block transformed on its own. Used for known-answer tests of the
/// raw block functions and, through `AESKDF`, for the KDBX AES key transformation.
public enum ECB {
    /// Encrypts whole blocks.
    public static func encrypt(_ plaintext: some ContiguousBytes, cipher: BlockCipher, key: SecureBytes) throws(CryptoError) -> Data {
        try transform(plaintext, cipher: cipher, key: key, encrypting: true)
    }

    /// Decrypts whole blocks.
    public static func decrypt(_ ciphertext: some ContiguousBytes, cipher: BlockCipher, key: SecureBytes) throws(CryptoError) -> Data {
        try transform(ciphertext, cipher: cipher, key: key, encrypting: false)
    }

    private static func transform(
        _ input: some ContiguousBytes, cipher: BlockCipher, key: SecureBytes, encrypting: Bool
    ) throws(CryptoError) -> Data {
        var buffer = input.withUnsafeBytes { Data($0) }
        guard buffer.count % cipher.blockSize == 0 else {
            throw .invalidInputLength(blockSize: cipher.blockSize, actual: buffer.count)
        }
        let context = try GcryptCipher(cipher, mode: .ecb, key: key)
        let result: Result<Void, CryptoError> = buffer.withUnsafeMutableBytes { bytes in
            Result { () throws(CryptoError) in
                if encrypting { try context.encrypt(inPlace: bytes) } else { try context.decrypt(inPlace: bytes) }
            }
        }
        try result.get()
        return buffer
    }
}

/// PKCS#7 padding checks.
public enum PKCS7 {
    /// The number of padding bytes at the end of `data`, after checking every one of them.
    public static func paddingLength(of data: Data, blockSize: Int) throws(CryptoError) -> Int {
        guard let last = data.last, data.count >= blockSize else { throw .invalidPadding }
        let padLength = Int(last)
        guard padLength >= 1, padLength <= blockSize else { throw .invalidPadding }
        // Accumulate differences so the check does not stop at the first bad byte.
        var difference: UInt8 = 0
        for byte in data.suffix(padLength) { difference |= byte ^ last }
        guard difference == 0 else { throw .invalidPadding }
        return padLength
    }
}

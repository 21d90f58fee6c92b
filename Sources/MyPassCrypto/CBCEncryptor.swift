public import Foundation

/// CBC encryption of a message handed over in pieces of whole blocks (a payload of many megabytes
/// encrypted segment by segment, never gathered whole): the chaining carries over from one piece to
/// the next, so the pieces together are the message encrypted at once. `finish` pads the last piece
/// (PKCS#7).
public final class CBCEncryptor {
    private let context: GcryptCipher
    private let blockSize: Int

    /// An encryptor for `cipher` with `key`, starting from `iv`.
    public init(cipher: BlockCipher, key: SecureBytes, iv: some ContiguousBytes) throws(CryptoError) {
        context = try GcryptCipher.cbc(cipher, key: key, iv: iv)
        blockSize = cipher.blockSize
    }

    /// Encrypts the next piece of the message in place; it must be whole blocks.
    public func encrypt(inPlace piece: inout Data) throws(CryptoError) {
        guard piece.count % blockSize == 0 else { throw .invalidInputLength(blockSize: blockSize, actual: piece.count) }
        let context = context
        let result: Result<Void, CryptoError> = piece.withUnsafeMutableBytes { bytes in
            Result { () throws(CryptoError) in try context.encrypt(inPlace: bytes) }
        }
        try result.get()
    }

    /// Pads the last piece of the message (PKCS#7) and encrypts it in place.
    public func finish(inPlace last: inout Data) throws(CryptoError) {
        let padLength = blockSize - last.count % blockSize
        last.append(contentsOf: repeatElement(UInt8(padLength), count: padLength))
        try encrypt(inPlace: &last)
    }
}

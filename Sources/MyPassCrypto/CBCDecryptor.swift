public import Foundation

/// CBC decryption of a message that arrives in pieces of any length (a KDBX 4 payload read block by
/// block): whole cipher blocks are decrypted as soon as they are complete, the chaining carries on
/// from piece to piece, and a partial block waits for the next piece. Padding is the caller's.
public final class CBCDecryptor {
    private let context: GcryptCipher
    private let blockSize: Int
    /// The start of a cipher block whose rest is still to come.
    private var partial: [UInt8] = []

    /// A decryptor for `cipher` with `key`, starting from `iv`.
    public init(cipher: BlockCipher, key: SecureBytes, iv: some ContiguousBytes) throws(CryptoError) {
        context = try GcryptCipher.cbc(cipher, key: key, iv: iv)
        blockSize = cipher.blockSize
    }

    /// Whether the input so far ended inside a cipher block (at the end of the message: corruption).
    public var endsInsideABlock: Bool { !partial.isEmpty }

    /// Decrypts the whole blocks that `piece` completes or holds, appending the plaintext to `output`.
    public func decrypt(_ piece: UnsafeRawBufferPointer, appendingTo output: inout [UInt8]) throws(CryptoError) {
        var input = piece[...]
        if !partial.isEmpty {
            let take = min(blockSize - partial.count, input.count)
            partial.append(contentsOf: input.prefix(take))
            input = input.dropFirst(take)
            guard partial.count == blockSize else { return }
            try decryptAppending(partial, to: &output)
            partial.removeAll(keepingCapacity: true)
        }
        let whole = input.count - input.count % blockSize
        if whole > 0 { try decryptAppending(UnsafeRawBufferPointer(rebasing: input.prefix(whole)), to: &output) }
        partial.append(contentsOf: input.dropFirst(whole))
    }

    private func decryptAppending(_ ciphertext: some Collection<UInt8>, to output: inout [UInt8]) throws(CryptoError) {
        let start = output.count
        output.append(contentsOf: ciphertext)
        let context = context
        let result: Result<Void, CryptoError> = output.withUnsafeMutableBytes { buffer in
            Result { () throws(CryptoError) in try context.decrypt(inPlace: UnsafeMutableRawBufferPointer(rebasing: buffer[start...])) }
        }
        try result.get()
    }
}

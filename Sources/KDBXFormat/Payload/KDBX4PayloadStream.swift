internal import Foundation
internal import MyPassCrypto

/// The KDBX 4 payload read as the parser needs it: each HMAC block is checked, then decrypted and
/// handed on, so the decrypted payload never sits whole in memory beside the file (at 100,000
/// entries that was 38 MB). CBC padding, in the last cipher block, is held back and removed at the end.
struct KDBX4PayloadStream: Sendable {
    /// The block stream: the file after its header, header hash and header HMAC (a slice, not a copy).
    let blocks: Data
    let hmacBaseKey: SecureBytes
    let cipher: PayloadCipher
    let cipherKey: SecureBytes
    let iv: Data
    /// The most payload bytes accepted.
    let limit: Int

    /// How much of a block is decrypted at a time.
    private static let decryptedPiece = 64 * 1024

    /// Hands the decrypted (still compressed) payload to `consume` piece by piece, in order.
    func produce(_ consume: (UnsafeRawBufferPointer) throws(KDBXError) -> Void) throws(KDBXError) {
        let decryptor = try Decryptor(cipher: cipher, key: cipherKey, iv: iv)
        var total = 0
        var plain: [UInt8] = []
        // A block (its HMAC checked whole) is decrypted and handed on a piece at a time: a buffer
        // for a whole 1 MiB block was most of what an open held beside the file and the vault.
        plain.reserveCapacity(Self.decryptedPiece + 16)
        try HMACBlockStream.forEachBlock(blocks, baseKey: hmacBaseKey, limit: limit) { block throws(KDBXError) in
            total += block.count
            var offset = block.startIndex
            while offset < block.endIndex {
                let end = min(offset + Self.decryptedPiece, block.endIndex)
                try decryptor.decrypt(block[offset..<end], appendingTo: &plain)
                offset = end
                // The last cipher block may be padding: keep it until the stream has ended.
                let ready = plain.count - decryptor.heldBack(of: plain.count)
                guard ready > 0 else { continue }
                let handed: Result<Void, KDBXError> = plain.withUnsafeBytes { bytes in
                    Result { () throws(KDBXError) in try consume(UnsafeRawBufferPointer(rebasing: bytes[..<ready])) }
                }
                try handed.get()
                plain.removeFirst(ready)
            }
        }
        try decryptor.finish(&plain, total: total)
        let last: Result<Void, KDBXError> = plain.withUnsafeBytes { bytes in Result { () throws(KDBXError) in try consume(bytes) } }
        try last.get()
    }

    /// The payload cipher, fed piece by piece.
    private enum Decryptor {
        case blockCipher(CBCDecryptor)
        case stream(StreamCipher)

        init(cipher: PayloadCipher, key: SecureBytes, iv: Data) throws(KDBXError) {
            do {
                if let block = PayloadCrypto.blockCipher(of: cipher) {
                    self = .blockCipher(try CBCDecryptor(cipher: block, key: key, iv: iv))
                } else {
                    self = .stream(try StreamCipher(.chaCha20, key: key, nonce: iv))
                }
            } catch {
                throw .crypto(error)
            }
        }

        func decrypt(_ block: Data, appendingTo plain: inout [UInt8]) throws(KDBXError) {
            let result: Result<Void, CryptoError> = block.withUnsafeBytes { bytes in
                Result { () throws(CryptoError) in
                    switch self {
                    case .blockCipher(let decryptor):
                        try decryptor.decrypt(bytes, appendingTo: &plain)
                    case .stream(let stream):
                        let start = plain.count
                        plain.append(contentsOf: bytes)
                        let applied: Result<Void, CryptoError> = plain.withUnsafeMutableBytes { buffer in
                            Result { () throws(CryptoError) in try stream.apply(to: UnsafeMutableRawBufferPointer(rebasing: buffer[start...])) }
                        }
                        try applied.get()
                    }
                }
            }
            if case .failure(let error) = result { throw .crypto(error) }
        }

        /// How many of the last decrypted bytes must wait for the end of the stream (CBC padding).
        func heldBack(of count: Int) -> Int {
            if case .blockCipher = self { return min(16, count) }
            return 0
        }

        /// The end: a block cipher's message must be whole blocks, its padding valid (then removed).
        func finish(_ plain: inout [UInt8], total: Int) throws(KDBXError) {
            guard case .blockCipher(let decryptor) = self else { return }
            guard total > 0, !decryptor.endsInsideABlock else {
                throw .corrupt("encrypted payload length \(total) is not whole blocks")
            }
            do {
                plain.removeLast(try PKCS7.paddingLength(of: Data(plain.suffix(16)), blockSize: 16))
            } catch {
                throw .corrupt("invalid padding at the end of the payload")
            }
        }
    }
}

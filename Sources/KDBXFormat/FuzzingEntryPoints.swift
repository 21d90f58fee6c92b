public import Foundation
internal import MyPassCrypto

/// Entry points for the libFuzzer targets in `Fuzz/` (not API): the block-stream layers and the gzip
/// inflater, which the public API only reaches after a successful key derivation.
@_spi(Fuzzing)
public enum FuzzingEntryPoints {
    /// A KDBX 4 HMAC block stream, authenticated with a fixed key and decrypted (ChaCha20, the cipher
    /// without padding, so every authentic stream reaches the consumer) as a file's payload is read.
    public static func readHMACBlocks(_ stream: Data) throws(KDBXError) -> Data {
        let payload = KDBX4PayloadStream(
            blocks: stream, hmacBaseKey: SecureBytes(Data(repeating: 7, count: 64)), cipher: .chaCha20,
            cipherKey: SecureBytes(Data(repeating: 8, count: 32)), iv: Data(repeating: 9, count: 12), limit: 1 << 24)
        var output = Data()
        try payload.produce { output.append(contentsOf: $0) }
        return output
    }

    /// A gzip stream inflated as a payload is (`GzipInflater`), fed in pieces of `pieceSize` bytes
    /// (a file's writer chooses how its payload is cut into blocks).
    public static func inflateGzip(_ stream: Data, pieceSize: Int) throws(KDBXError) -> Data {
        let inflater = try GzipInflater(chunkSize: 1 << 16, limit: 1 << 24)
        var output = Data()
        var failure: KDBXError?
        stream.withUnsafeBytes { bytes in
            var start = 0
            while start < bytes.count, failure == nil {
                let end = min(bytes.count, start + max(pieceSize, 1))
                do throws(KDBXError) {
                    try inflater.feed(UnsafeRawBufferPointer(rebasing: bytes[start..<end])) { output.append(contentsOf: $0) }
                } catch {
                    failure = error
                }
                start = end
            }
        }
        if let failure { throw failure }
        try inflater.finish()
        return output
    }

    /// A KDBX 3.1 hashed block stream.
    public static func readHashedBlocks(_ stream: Data) throws(KDBXError) -> Data {
        try HashedBlockStream.read(stream, limit: 1 << 24)
    }
}

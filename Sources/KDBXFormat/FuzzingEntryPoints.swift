public import Foundation
internal import MyPassCrypto

/// Entry points for the libFuzzer targets in `Fuzz/` (not API): the block-stream layers, which the
/// public API only reaches after a successful key derivation.
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

    /// A KDBX 3.1 hashed block stream.
    public static func readHashedBlocks(_ stream: Data) throws(KDBXError) -> Data {
        try HashedBlockStream.read(stream, limit: 1 << 24)
    }
}

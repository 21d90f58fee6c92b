public import Foundation
internal import MyPassCrypto

/// Entry points for the libFuzzer targets in `Fuzz/` (not API): the block-stream layers, which the
/// public API only reaches after a successful key derivation.
@_spi(Fuzzing)
public enum FuzzingEntryPoints {
    /// A KDBX 4 HMAC block stream, authenticated with a fixed key.
    public static func readHMACBlocks(_ stream: Data) throws(KDBXError) -> Data {
        try HMACBlockStream.read(stream, baseKey: SecureBytes(Data(repeating: 7, count: 64)), limit: 1 << 24)
    }

    /// A KDBX 3.1 hashed block stream.
    public static func readHashedBlocks(_ stream: Data) throws(KDBXError) -> Data {
        try HashedBlockStream.read(stream, limit: 1 << 24)
    }
}

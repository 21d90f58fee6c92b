public import Foundation

/// A vault written as a KDBX file (`KDBXWriter.encode`).
public struct EncodedVault: Sendable {
    /// The file's bytes.
    public let file: Data
    /// The key the file is encrypted with (for the next save or a quick unlock).
    public let derivedKey: DerivedKey
    /// SHA-256 of the payload inside as it is encrypted: the inner header (KDBX 4) and XML document,
    /// compressed if the settings say so.
    public let payloadDigest: Data
}

internal import Foundation
internal import SyncFiles
internal import SyncState
internal import KDBXFormat
internal import MyPassCore

/// Serializing a vault and proving the bytes open to it: every write of a vault (a save, a
/// conversion, a merge written elsewhere) goes through here.
///
/// The proof is on the bytes read back from the disk: they must decrypt with the key, pass every
/// integrity check (header hash and HMAC, each block's HMAC or hash, padding) to exactly the payload
/// the writer produced from the vault (the SHA-256 of the compressed inner header and XML document,
/// `KDBXWriter.encode`), and that payload must inflate to its end (gzip's CRC-32 and length of the
/// document checked by igzip). That the document reads back as the same vault is the codec's own
/// property, proven by the round-trip tests and fuzzers rather than by parsing every save twice: the
/// parse was half of a save's time and a second copy of the vault in memory.
enum VerifiedEncoding {
    /// The file for `vault`, checked as above.
    static func encode(
        _ vault: Vault, settings: FormatSettings, key: CompositeKey, cachedKey: DerivedKey?, limits: ResourceLimits
    ) throws -> (bytes: Data, derivedKey: DerivedKey) {
        let encoded = try KDBXWriter.encode(vault, settings: settings, key: key, cachedKey: cachedKey, limits: limits)
        try verify(encoded.file, matches: encoded, limits: limits)
        return (encoded.file, encoded.derivedKey)
    }

    /// Throws unless `bytes` decrypt with `encoded`'s key to exactly its payload, which inflates intact.
    static func verify(_ bytes: Data, matches encoded: EncodedVault, limits: ResourceLimits) throws {
        let digest = try KDBXReader.payloadDigest(of: bytes, derivedKey: encoded.derivedKey, limits: limits)
        guard digest == encoded.payloadDigest else {
            throw KDBXError.unwritable("the written vault did not read back identical; nothing was replaced")
        }
    }
}

internal import Foundation
internal import KDBXFormat
internal import MyPassCore

/// Serializing a vault and proving the bytes open to exactly that vault: every write of a vault
/// (a save, a conversion, a merge written elsewhere) goes through here.
enum VerifiedEncoding {
    /// The file for `vault`, checked by opening it again.
    static func encode(
        _ vault: Vault, settings: FormatSettings, key: CompositeKey, cachedKey: DerivedKey?, limits: ResourceLimits
    ) throws -> (bytes: Data, derivedKey: DerivedKey) {
        let (file, derived) = try KDBXWriter.serialize(vault, settings: settings, key: key, cachedKey: cachedKey, limits: limits)
        try verify(file, holds: vault, key: key, derivedKey: derived, limits: limits)
        return (file, derived)
    }

    /// Throws unless `bytes` open with `key` to exactly `vault`.
    static func verify(_ bytes: Data, holds vault: Vault, key: CompositeKey, derivedKey: DerivedKey, limits: ResourceLimits) throws {
        let check = try KDBXReader.open(bytes, key: key, cachedKey: derivedKey, limits: limits)
        let identical = check.vault == vault
        DeferredRelease.drop(check)  // freed off this thread: the caller's next step is waiting
        guard identical else { throw KDBXError.unwritable("the written vault did not read back identical; nothing was replaced") }
    }
}

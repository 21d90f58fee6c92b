public import Foundation
public import MyPassCrypto

/// The credentials of a vault combined as KeePass does: SHA-256 over the password's SHA-256
/// followed by the key file's component. An empty password is a component (SHA-256 of ""), unlike
/// no password; the password is used byte for byte, never Unicode-normalised.
public struct CompositeKey: Sendable {
    /// The 32-byte combined key fed to the KDF.
    let rawKey: SecureBytes

    /// Combines a password (UTF-8 bytes, nil for none) and a key file's contents (nil for none).
    public init(password: SecureBytes?, keyFileContents: Data?) throws(KDBXError) {
        guard password != nil || keyFileContents != nil else {
            throw .invalidKeyFile("a vault needs a password, a key file or both")
        }
        var components = SecureBytes(count: 0)
        if let password {
            components = components.appending(SHA256.secureHash(password))
        }
        if let keyFileContents {
            components = components.appending(try KeyFile.keyComponent(of: keyFileContents))
        }
        rawKey = SHA256.secureHash(components)
    }

    /// Convenience for tests and tools: a password given as a string.
    public init(password: String?, keyFileContents: Data? = nil) throws(KDBXError) {
        try self.init(password: password.map { SecureBytes(Data($0.utf8)) }, keyFileContents: keyFileContents)
    }
}

/// The result of running the KDF: reusable for saves as long as the credentials and the KDF
/// parameters (and so the salt) stay the same, so that saving and reloading need no new derivation.
public struct DerivedKey: Sendable {
    /// The KDF settings this key was derived with.
    public let kdf: KDFParameters
    let transformedKey: SecureBytes
    /// The composite key it was derived from, so that a cached key is never reused for other credentials.
    private let sourceKey: SecureBytes

    /// Runs `kdf` over `compositeKey` (checked against `limits` first).
    /// A key restored from storage (quick unlock): `transformedKey` as `storageForm` gave it. It opens
    /// files only through `KDBXReader.open(_:derivedKey:)`; it is never taken for any credentials.
    public init(restoring transformedKey: SecureBytes, kdf: KDFParameters) {
        self.kdf = kdf
        self.transformedKey = transformedKey
        sourceKey = SecureBytes(Data())
    }

    /// The KDF result itself, for a `DerivedKeyStore` (it opens the vault without the password while
    /// the KDF settings and salt stay the same: keep it only in protected storage, with an expiry).
    public var storageForm: SecureBytes { transformedKey }

    /// Runs the KDF `kdf` on `compositeKey` (within `limits`).
    public init(compositeKey: CompositeKey, kdf: KDFParameters, limits: ResourceLimits = .standard) throws(KDBXError) {
        self.kdf = kdf
        sourceKey = compositeKey.rawKey
        transformedKey = try kdf.deriveKey(from: compositeKey.rawKey, limits: limits)
    }

    /// `cached` when it was derived from `compositeKey` with exactly `kdf` (same salt), otherwise a
    /// new derivation.
    static func reusing(
        _ cached: DerivedKey?, compositeKey: CompositeKey, kdf: KDFParameters, limits: ResourceLimits
    ) throws(KDBXError) -> DerivedKey {
        if let cached, cached.kdf == kdf, cached.sourceKey == compositeKey.rawKey { return cached }
        return try DerivedKey(compositeKey: compositeKey, kdf: kdf, limits: limits)
    }

    /// The payload cipher key: SHA-256(masterSeed || transformedKey).
    func cipherKey(masterSeed: Data) -> SecureBytes {
        var hasher = SHA2Hasher(.sha256)
        hasher.update(masterSeed)
        hasher.update(transformedKey)
        return hasher.finalizeSecure()
    }

    /// The KDBX 4 HMAC base key: SHA-512(masterSeed || transformedKey || 0x01).
    func hmacBaseKey(masterSeed: Data) -> SecureBytes {
        var hasher = SHA2Hasher(.sha512)
        hasher.update(masterSeed)
        hasher.update(transformedKey)
        hasher.update([UInt8(1)])
        return hasher.finalizeSecure()
    }
}

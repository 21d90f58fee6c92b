public import Foundation
public import MyPassCrypto

/// A challenge-response key component (a YubiKey's HMAC-SHA1 slot, its secret, or a program that
/// answers for it): the response to a challenge the file decides, asked at every open and save.
public protocol ChallengeResponse: Sendable {
    /// The response (20 bytes for HMAC-SHA1) to `challenge`.
    func response(to challenge: Data) throws -> Data
}

/// The credentials of a vault combined as KeePass does: SHA-256 over the password's SHA-256
/// followed by the key file's component. An empty password is a component (SHA-256 of ""), unlike
/// no password; the password is used byte for byte, never Unicode-normalised. A challenge-response
/// component joins as KeePassXC, KeeWeb and Strongbox join it (checked against their vaults): in
/// KDBX 4 the challenge is the KDF seed and SHA-256 of the response is one more component of the
/// key fed to the KDF; in KDBX 3.1 the challenge is the master seed and SHA-256 of the response
/// goes between the master seed and the transformed key in the final key.
public struct CompositeKey: Sendable {
    /// The 32-byte combined key of the password and key file.
    let rawKey: SecureBytes
    /// The password and key-file components, for a key that adds a challenge-response component.
    private let components: SecureBytes
    /// The challenge-response component, if any.
    public private(set) var challengeResponse: (any ChallengeResponse)?

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
        self.components = components
    }

    /// This key with a challenge-response component.
    public func adding(_ challengeResponse: any ChallengeResponse) -> CompositeKey {
        var key = self
        key.challengeResponse = challengeResponse
        return key
    }

    /// SHA-256 of the response to `challenge`.
    static func responseComponent(_ challengeResponse: any ChallengeResponse, challenge: Data) throws(KDBXError) -> SecureBytes {
        let response: Data
        do {
            response = try challengeResponse.response(to: challenge)
        } catch let error as KDBXError {
            throw error
        } catch {
            throw .challengeResponseFailed("\(error)")
        }
        guard !response.isEmpty else { throw .challengeResponseFailed("an empty response") }
        return SHA256.secureHash(SecureBytes(response))
    }

    /// The key fed to the KDF of a file of `version` with `kdf`.
    func kdfInput(kdf: KDFParameters, version: KDBXVersion) throws(KDBXError) -> SecureBytes {
        guard let challengeResponse, version.isKDBX4 else { return rawKey }
        return SHA256.secureHash(components.appending(try Self.responseComponent(challengeResponse, challenge: kdf.salt)))
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
    /// Whether it was derived for a KDBX 4 file (a challenge-response component is then inside it).
    private let forKDBX4: Bool
    /// KDBX 3.1 with a challenge-response component: asked for each master seed, for the final key.
    private let finalKeyChallenge: (any ChallengeResponse)?

    /// Runs `kdf` over `compositeKey` (checked against `limits` first).
    /// A key restored from storage (quick unlock): `transformedKey` as `storageForm` gave it. It opens
    /// files only through `KDBXReader.open(_:derivedKey:)`; it is never taken for any credentials.
    public init(restoring transformedKey: SecureBytes, kdf: KDFParameters) {
        self.kdf = kdf
        self.transformedKey = transformedKey
        sourceKey = SecureBytes(Data())
        forKDBX4 = true
        finalKeyChallenge = nil
    }

    /// The KDF result itself, for a `DerivedKeyStore` (it opens the vault without the password while
    /// the KDF settings and salt stay the same: keep it only in protected storage, with an expiry).
    public var storageForm: SecureBytes { transformedKey }

    /// Runs the KDF `kdf` on `compositeKey` (within `limits`) for a file of `version`.
    public init(compositeKey: CompositeKey, kdf: KDFParameters, limits: ResourceLimits = .standard, version: KDBXVersion = .v4_0) throws(KDBXError) {
        self.kdf = kdf
        sourceKey = compositeKey.rawKey
        forKDBX4 = version.isKDBX4
        finalKeyChallenge = version.isKDBX4 ? nil : compositeKey.challengeResponse
        transformedKey = try kdf.deriveKey(from: compositeKey.kdfInput(kdf: kdf, version: version), limits: limits)
    }

    /// `cached` when it was derived from `compositeKey` with exactly `kdf` (same salt) for the same
    /// kind of file, otherwise a new derivation. A challenge-response component answers the same
    /// challenge (the same salt) the same way, so a cached key stays valid for it.
    static func reusing(
        _ cached: DerivedKey?, compositeKey: CompositeKey, kdf: KDFParameters, limits: ResourceLimits, version: KDBXVersion
    ) throws(KDBXError) -> DerivedKey {
        if let cached, cached.kdf == kdf, cached.sourceKey == compositeKey.rawKey, cached.forKDBX4 == version.isKDBX4,
           (cached.finalKeyChallenge == nil) == (version.isKDBX4 || compositeKey.challengeResponse == nil) {
            return cached
        }
        return try DerivedKey(compositeKey: compositeKey, kdf: kdf, limits: limits, version: version)
    }

    /// The payload cipher key: SHA-256(masterSeed || transformedKey), in KDBX 3.1 with a
    /// challenge-response component SHA-256(masterSeed || SHA-256(response(masterSeed)) || transformedKey).
    func cipherKey(masterSeed: Data) throws(KDBXError) -> SecureBytes {
        var hasher = SHA2Hasher(.sha256)
        hasher.update(masterSeed)
        if let finalKeyChallenge {
            hasher.update(try CompositeKey.responseComponent(finalKeyChallenge, challenge: masterSeed))
        }
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

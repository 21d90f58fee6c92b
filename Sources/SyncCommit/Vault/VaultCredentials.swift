public import Foundation
internal import SyncFiles
internal import SyncState
public import MyPassCrypto
public import KDBXFormat

/// What unlocks a vault: a password, the contents of a key file, or both. Built once from what the
/// user typed or chose; the password is never kept as a `String`.
public struct VaultCredentials: Sendable {
    package let key: CompositeKey

    /// Credentials from `password` (nil: none) and `keyFile` (the key file's bytes; nil: none).
    /// Fails when the key file cannot be used.
    public init(password: SecureBytes?, keyFile: Data?) throws {
        key = try CompositeKey(password: password, keyFileContents: keyFile)
    }

    /// Credentials from a password an app holds as text (a password field), and a key file's bytes.
    public init(password: String, keyFile: Data? = nil) throws {
        try self.init(password: SecureBytes(bytes: Array(password.utf8)), keyFile: keyFile)
    }

    init(key: CompositeKey) {
        self.key = key
    }

    /// These credentials with a challenge-response component (a YubiKey, its secret, a program).
    public func adding(_ challengeResponse: any ChallengeResponse) -> VaultCredentials {
        VaultCredentials(key: key.adding(challengeResponse))
    }
}

/// A challenge-response component of a vault's key (a YubiKey slot, a secret, a command), as the
/// commands pass it around.
public typealias ChallengeResponseComponent = ChallengeResponse

internal import Foundation
public import KDBXFormat
public import MyPassCore
internal import MyPassCrypto

/// One vault as an app holds it: locked, or unlocked with its decrypted content and keys. `lock()`
/// drops both (keys are `SecureBytes`, zeroed when released; protected values stay masked while
/// unlocked). Quick unlock opens the vault from a derived key kept in a `DerivedKeyStore`, without the
/// password and without running the KDF, while the vault's KDF settings and salt are unchanged.
public final class VaultSession: @unchecked Sendable {
    public let path: String
    /// The store's name for this vault: its resolved path.
    public let vaultID: String
    private let store: (any DerivedKeyStore)?
    private let limits: ResourceLimits
    private let guardLock = NSLock()
    private var opened: OpenedVault?

    public init(path: String, store: (any DerivedKeyStore)?, limits: ResourceLimits = .standard) {
        self.path = path
        vaultID = DurableFile.resolvedPath(path)
        self.store = store
        self.limits = limits
    }

    public var isUnlocked: Bool { guardLock.withLock { opened != nil } }

    /// The decrypted vault while unlocked.
    public var vault: Vault? { guardLock.withLock { opened?.vault } }

    /// Unlocks with the credentials (runs the KDF) and, with a store, keeps the derived key there.
    public func unlock(with key: CompositeKey) throws {
        let (bytes, _) = try DurableFile.read(atPath: path)
        let result = try KDBXReader.open(bytes, key: key, limits: limits)
        guardLock.withLock { opened = result }
        try store?.store(result.derivedKey, for: vaultID)
    }

    /// Unlocks from the stored derived key. False when there is none, or when the vault's KDF
    /// settings or salt changed since (the stale key is forgotten): then ask for the password.
    public func quickUnlock() throws -> Bool {
        guard let store else { return false }
        guard let stored = store.load(for: vaultID) else { return false }
        let storedKey = stored.transformedKey
        let storedFingerprint = stored.kdfFingerprint
        let (bytes, _) = try DurableFile.read(atPath: path)
        let kdf = try KDBXReader.header(of: bytes).kdf
        guard kdf.fingerprint == storedFingerprint else {
            store.remove(for: vaultID)
            return false
        }
        let restored = DerivedKey(restoring: storedKey, kdf: kdf)
        switch Result(catching: { () throws(KDBXError) in try KDBXReader.open(bytes, derivedKey: restored, limits: limits) }) {
        case .success(let result):
            guardLock.withLock { opened = result }
            return true
        case .failure(.wrongCredentials):
            store.remove(for: vaultID)  // The password changed with the same KDF salt: the key is useless.
            return false
        case .failure(let error):
            throw error
        }
    }

    /// Locks: the decrypted vault and the keys are dropped.
    public func lock() {
        guardLock.withLock { opened = nil }
    }

    /// Forgets the stored derived key (quick unlock needs the password again).
    public func forgetQuickUnlock() {
        store?.remove(for: vaultID)
    }
}

internal import Foundation
internal import Synchronization
public import SyncFiles
internal import SyncState
public import KDBXFormat
public import MyPassCore
internal import MyPassCrypto

/// One vault as an app holds it: locked, or unlocked with its decrypted content and keys. `lock()`
/// drops both (keys are `SecureBytes`, zeroed when released; protected values stay masked while
/// unlocked). Quick unlock opens the vault from a derived key kept in a `DerivedKeyStore`, without the
/// password and without running the KDF, while the vault's KDF settings and salt are unchanged.
public final class LockableVault: Sendable {
    /// The vault file.
    public let path: String
    /// The store's name for this vault: its resolved path.
    public let vaultID: String
    private let store: (any DerivedKeyStore)?
    private let limits: ResourceLimits
    /// The file system the vault is on.
    private let fileSystem: FileSystem
    /// The decrypted vault and its keys while unlocked.
    private let opened = Mutex<OpenedVault?>(nil)

    /// A locked session on the vault at `path` on `fileSystem`; `store` keeps derived keys for quick
    /// unlock (nil: none).
    public init(path: String, on fileSystem: FileSystem = .real, store: (any DerivedKeyStore)?, limits: ResourceLimits = .standard) {
        self.path = path
        self.fileSystem = fileSystem
        vaultID = DurableFile.resolvedPath(path, on: fileSystem)
        self.store = store
        self.limits = limits
    }

    /// Whether the vault is decrypted now.
    public var isUnlocked: Bool { opened.withLock { $0 != nil } }

    /// The decrypted vault while unlocked.
    public var vault: Vault? { opened.withLock { $0?.vault } }

    /// Unlocks with the credentials (runs the KDF) and, with a store, keeps the derived key there.
    public func unlock(with key: CompositeKey) throws {
        let result = try VaultFile.read(path, on: fileSystem, limits: limits).open(key: key)
        opened.withLock { $0 = result }
        try store?.store(result.derivedKey, for: vaultID)
    }

    /// Unlocks from the stored derived key. False when there is none, or when the vault's KDF
    /// settings or salt changed since (the stale key is forgotten): then ask for the password.
    public func quickUnlock() throws -> Bool {
        guard let store else { return false }
        let bytes = try VaultFile.read(path, on: fileSystem, limits: limits, checksKDF: false).bytes
        switch try Self.open(bytes, from: store, vaultID: vaultID, limits: limits) {
        case .opened(let result, _):
            opened.withLock { $0 = result }
            return true
        case .stale:
            store.remove(for: vaultID)
            return false
        case .none:
            return false
        }
    }

    /// What a stored key does for one version of a vault.
    enum StoredKeyUse {
        /// It opened the vault.
        case opened(OpenedVault, expires: Date?)
        /// It was derived for other KDF settings or another salt (the vault was saved since).
        case stale(expires: Date?)
        /// There is none (or it no longer opens the vault with the same salt: it was forgotten).
        case none
    }

    /// Opens `bytes` with the key `store` holds for `vaultID`, without running the KDF.
    static func open(_ bytes: Data, from store: any DerivedKeyStore, vaultID: String, limits: ResourceLimits) throws -> StoredKeyUse {
        guard let stored = store.load(for: vaultID) else { return .none }
        let kdf = try KDBXReader.header(of: bytes).kdf
        guard kdf.fingerprint == stored.kdfFingerprint else { return .stale(expires: stored.expires) }
        let restored = DerivedKey(restoring: stored.transformedKey, kdf: kdf)
        switch Result(catching: { () throws(KDBXError) in try KDBXReader.open(bytes, derivedKey: restored, limits: limits) }) {
        case .success(let result):
            return .opened(result, expires: stored.expires)
        case .failure(.wrongCredentials):
            store.remove(for: vaultID)  // The password changed with the same KDF salt: the key is useless.
            return .none
        case .failure(let error):
            throw error
        }
    }

    /// Locks: the decrypted vault and the keys are dropped.
    public func lock() {
        opened.withLock { $0 = nil }
    }

    /// Forgets the stored derived key (quick unlock needs the password again).
    public func forgetQuickUnlock() {
        store?.remove(for: vaultID)
    }
}

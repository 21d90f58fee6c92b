public import Foundation
internal import SyncFiles
internal import SyncState
public import KDBXFormat

/// Quick unlock between separate processes (the command line's `unlock` / `lock`): the vault's
/// derived key is kept in the kernel keyring (possessor-only, with an expiry) so that commands which
/// only read the vault open it without the password and without a KDF run. Commands that write still
/// need the password: every save draws a new KDF salt, and a key for the new salt can only be derived
/// from the composite key (keeping the salt instead would let a leaked key open every later version).
/// After each save or password open the kept key is replaced by the key for the file's current salt,
/// until the same expiry, so reading goes on without the password. A kept key whose salt no longer
/// fits (another device saved) stays until it is refreshed or expires: it opens only older versions.
public struct QuickUnlock: Sendable {
    /// How long `unlock` keeps the key when not told.
    public static let defaultLifetime: TimeInterval = 600
    /// The longest time `unlock` keeps a key.
    public static let maximumLifetime: TimeInterval = 24 * 3600

    let store: any DerivedKeyStore

    /// Quick unlock through `store` (the kernel keyring unless told).
    public init(store: any DerivedKeyStore = KernelKeyringDerivedKeyStore()) {
        self.store = store
    }

    /// Whether the kernel keyring can be used here (`begin` needs it; where it cannot be used every
    /// other call finds no kept key and does nothing).
    public static var isAvailable: Bool { KernelKeyringDerivedKeyStore.isAvailable }

    /// Whether the kept key would be in the user's default session keyring, which every process of
    /// the user can join (no session keyring of this login's own: no `pam_keyinit`).
    public static var isSharedWithEveryProcessOfTheUser: Bool { KernelKeyringDerivedKeyStore.sessionIsUserDefault }

    /// The store's name for the vault at `path` (its resolved path).
    static func vaultID(_ path: String) -> String { DurableFile.resolvedPath(path, on: .real) }

    /// Keeps the derived key of `opened` (the vault at `path`, opened with its password) for
    /// `lifetime` seconds; returns when it expires.
    @discardableResult
    public func begin(_ opened: OpenedVault, path: String, lifetime: TimeInterval) throws -> Date {
        let expiry = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 + min(max(lifetime, 1), Self.maximumLifetime)).rounded(.up))
        try store.store(opened.derivedKey, for: Self.vaultID(path), until: expiry)
        return expiry
    }

    /// The vault whose file holds `bytes` (read from `path`), opened with the kept key; nil when no
    /// key is kept for it or the kept one was derived for another salt.
    public func open(_ bytes: Data, path: String, limits: ResourceLimits) throws -> OpenedVault? {
        guard case .opened(let opened, _) = try LockableVault.open(bytes, from: store, vaultID: Self.vaultID(path), limits: limits) else {
            return nil
        }
        return opened
    }

    /// After the vault at `path` was opened or saved with the password: a key kept for it (fitting or
    /// stale) is replaced by `derivedKey` until the same expiry. Nothing happens when none is kept.
    public func refresh(path: String, with derivedKey: DerivedKey) {
        let vaultID = Self.vaultID(path)
        guard let kept = store.load(for: vaultID), kept.kdfFingerprint != derivedKey.kdf.fingerprint,
              let expiry = kept.expires, expiry > Date() else { return }
        try? store.store(derivedKey, for: vaultID, until: expiry)
    }

    /// When quick unlock of the vault at `path` ends; nil when it is not on.
    public func expiry(path: String) -> Date? {
        store.load(for: Self.vaultID(path))?.expires
    }

    /// Ends quick unlock of the vault at `path`; whether it was on.
    @discardableResult
    public func end(path: String) -> Bool {
        let vaultID = Self.vaultID(path)
        let wasOn = store.load(for: vaultID) != nil
        store.remove(for: vaultID)
        return wasOn
    }
}

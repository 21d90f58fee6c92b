public import Foundation
internal import SyncFiles
public import SyncState
package import KDBXFormat
public import MyPassCore

/// A vault file opened with its credentials (or a quick-unlock key): its content, and what can be
/// done with it — open other versions of it, start an editing session, write it elsewhere, export it.
public final class UnlockedVault: Sendable {
    /// The read this vault came from.
    public let file: VaultFile
    package let opened: OpenedVault
    /// Nil when opened by quick unlock (reading only: a save needs the password).
    let credentials: VaultCredentials?

    init(file: VaultFile, opened: OpenedVault, credentials: VaultCredentials?) {
        self.file = file
        self.opened = opened
        self.credentials = credentials
    }

    /// A vault holds tens of thousands of objects: they are freed off the caller's thread (or, in a
    /// process about to exit, not one by one at all).
    deinit {
        DeferredRelease.drop(opened)
    }

    /// The vault file's path.
    public var path: String { file.path }
    /// The decrypted vault.
    public var vault: Vault { opened.vault }
    /// The format it was read in.
    public var format: VaultFormat { VaultFormat(settings: opened.settings) }

    /// The credentials, or why there are none (a quick unlock reads, never writes).
    func requireCredentials() throws -> VaultCredentials {
        guard let credentials else { throw KDBXError.unwritable("opened with a quick-unlock key: writing needs the password") }
        return credentials
    }

    /// Opens another version of this vault at `path` with `credentials` (default: these), reusing
    /// this vault's derived key where the KDF salt matches; what it holds unchanged takes this
    /// vault's storage.
    public func openCopy(atPath path: String, with credentials: VaultCredentials? = nil) throws -> VaultCopy {
        let key = try credentials ?? requireCredentials()
        // Another version (a base, a git ancestor, another file to compare): the budget for versions from elsewhere.
        let budget = file.foreignVersionBudget
        let bytes = try ForeignVersion.read(atPath: path, on: file.fileSystem, followSymlinks: true, budget: budget).bytes
        let opened = try ForeignVersion.open(bytes, key: key.key, cachedKey: self.opened.derivedKey, budget: budget, sharingStorageWith: vault)
        return VaultCopy(path: path, opened: opened, credentials: key)
    }

    /// The version this device last synced (from `state`), when it opens with this vault's key; what
    /// it holds unchanged takes this vault's storage (a merge's base costs little memory).
    public func rememberedBase(in state: SyncStateStore) -> Vault? {
        guard let key = credentials?.key else { return nil }
        return state.baseVault(for: path, key: key, cachedKey: opened.derivedKey, limits: file.limits, sharingStorageWith: vault)
    }

    /// The format of the version this device last synced (its file's header), for merging the cipher and KDF.
    package func rememberedBaseFormat(in state: SyncStateStore) -> FormatSettings? {
        MergeCommit.Formats.rememberedBase(in: state, vaultPath: path)
    }

    /// Records the version read as this device's base when it is a new one (a failure only costs
    /// the next merge its base).
    public func recordAsBase(in state: SyncStateStore) {
        try? state.recordIfNew(file.bytes, fingerprint: file.fingerprint, for: path)
    }

    /// An editing session on the version read (no second read), its version recorded as the base.
    /// `keepsBackup` and the device settings' salt rule apply to its saves; quick unlock is kept in step.
    public func session(state: SyncStateStore, keepsBackup: Bool = false, settings: DeviceSettings) throws -> SyncSession {
        let session = try SyncSession(unlocked: self, key: requireCredentials().key, state: state, settings: settings, keepsBackup: keepsBackup)
        session.keepInStep(QuickUnlock())
        return session
    }

    /// This vault as unsaved edits of the vault file at `path` (a working copy made elsewhere),
    /// based on the version this device last synced there: a save sees any change made since.
    public func resumingSession(on path: String, state: SyncStateStore, settings: DeviceSettings) throws -> SyncSession {
        try SyncSession(path: path, working: opened, key: requireCredentials().key, state: state, limits: file.limits, settings: settings)
    }

    /// Writes `vault` (default: this one) in `format` (default: this one's) to `path`, replacing
    /// what is there atomically, after checking that the bytes open to exactly that vault.
    public func writeVerified(_ vault: Vault? = nil, format: VaultFormat? = nil, toPath target: String) throws {
        let key = try requireCredentials()
        let content = vault ?? opened.vault
        let file = try VerifiedEncoding.encode(content, settings: format?.settings ?? opened.settings, key: key.key,
                                               cachedKey: opened.derivedKey, limits: self.file.limits).bytes
        try AtomicFileWriter.write(file, toPath: target, on: self.file.fileSystem)
    }

    /// Keeps this vault's key in the kernel keyring for `lifetime` seconds (`QuickUnlock`).
    @discardableResult
    public func beginQuickUnlock(for lifetime: TimeInterval, using quickUnlock: QuickUnlock = QuickUnlock()) throws -> Date {
        try quickUnlock.begin(opened, path: path, lifetime: lifetime)
    }

    /// After an open with the password: a kept quick-unlock key for an older salt is replaced.
    public func refreshQuickUnlock(_ quickUnlock: QuickUnlock = QuickUnlock()) {
        guard credentials != nil else { return }
        quickUnlock.refresh(path: path, with: opened.derivedKey)
    }
}

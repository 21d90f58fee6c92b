public import Foundation
public import SyncFiles
public import SyncState
public import KDBXFormat
public import MyPassCore
internal import MyPassMerge

/// One vault file held open by this device: the working snapshot, the version it came from, and the
/// saves that never overwrite a change they have not seen (the compare-and-swap). When the file
/// changed underneath, `save` returns a conflict; `reload` and `overwrite` are decisions on it that
/// merge nothing. A merge (`saveMerging`, `resolve(_:by: .merge)`) is written through `MergeCommit.write`.
///
/// A session is a sequence of reads and saves by one caller, confined to one thread: not `Sendable`.
public final class SyncSession {
    /// The decisions for a save conflict.
    public enum Decision: String, Sendable, CaseIterable {
        /// Take the disk version; the working copy is kept as a backup file.
        case reload
        /// Write the working copy; the disk version is kept as a backup file.
        case overwrite
        /// Three-way merge of the working copy and the disk version against the base, then write.
        case merge
    }

    /// The file changed on disk since this session read or wrote it.
    public struct Conflict: Sendable {
        /// The version now on disk.
        public let disk: OpenedVault
        /// The bytes of that version (kept as the new base when it is taken).
        public let diskBytes: Data
        /// The fingerprint of that version.
        public let diskFingerprint: Fingerprint
    }

    /// What `save` did.
    public enum SaveOutcome: Sendable {
        case saved(Fingerprint)
        /// The working snapshot is the content of the file this session knows: nothing was written
        /// (a rewrite with new seeds would be a new version to every sync engine, and two devices
        /// rewriting the same merge make a new conflict copy: a storm).
        case unchanged(Fingerprint)
        case conflict(Conflict)

        /// Whether the file was replaced; nil for a conflict (nothing decided yet).
        public var wroteFile: Bool? {
            switch self {
            case .saved: true
            case .unchanged: false
            case .conflict: nil
            }
        }
    }

    /// What a working snapshot made by a merge is, against the file the session knows.
    package enum MergeContent {
        /// Known to hold content the file lacks: written without a second comparison.
        case knownToDiffer
        /// Compared with the file's content before a save: equal content is not written.
        case compareWithFile
    }

    /// What a decision did.
    public struct Resolution: Sendable {
        /// The decision that was applied.
        public let decision: Decision
        /// What the decision changed in the working snapshot (or, for `overwrite`, in the file).
        public let changes: [Change]
        /// Problems that did not stop it.
        public let warnings: [String]
        /// Where the copy that was not kept went.
        public let backup: String?
        /// Whether the vault file was replaced (false: the outcome was already the content on disk).
        public let wroteFile: Bool

        /// A resolution with everything it says.
        public init(decision: Decision, changes: [Change], warnings: [String], backup: String?, wroteFile: Bool) {
            self.decision = decision
            self.changes = changes
            self.warnings = warnings
            self.backup = backup
            self.wroteFile = wroteFile
        }
    }

    /// The vault file (as the caller named it).
    public let path: String
    /// Where this device keeps the base of the vault.
    public let state: SyncStateStore
    /// The file system the vault and its state are on (the state store's).
    var fileSystem: FileSystem { state.fileSystem }
    /// The working snapshot: the vault as edited in this session.
    public private(set) var vault: Vault
    /// The format the next save writes.
    public private(set) var settings: FormatSettings
    /// The version of the file this session is based on (read or last written).
    public private(set) var fingerprint: Fingerprint
    private(set) var key: CompositeKey
    private(set) var derivedKey: DerivedKey
    /// The content of the file at `fingerprint`, when this session has read or written it.
    private var diskContent: (vault: Vault, settings: FormatSettings)?
    /// The key was replaced by `adoptCredentials`: the next save writes even when the content is the same.
    private var credentialsAdopted = false
    /// The working snapshot is a merge whose content is compared with the file's before a save
    /// (`takeMerge`, `mergeAddsNothing`).
    private var comparesMergeWithFile = false
    /// The bytes the last save replaced (a journal's "before"), when it wrote.
    private(set) var replacedBytes: Data?
    /// The file's bytes as this session last read, wrote or took them in (a journal's "after").
    private(set) var fileBytes: Data?
    let limits: ResourceLimits
    /// Bounded retries of a merge-and-save while the file keeps changing.
    public static let maximumAttempts = 5

    /// Opens `path` and remembers the version read as this device's base.
    /// `settings`: the device's save rules (backups, KDF salt rotation); `keepsBackup` also keeps one.
    public convenience init(path: String, key: CompositeKey, state: SyncStateStore, limits: ResourceLimits = .standard,
                            settings: DeviceSettings, keepsBackup: Bool = false) throws {
        let file = try VaultFile.read(path, on: state.fileSystem, limits: limits)
        let unlocked = try file.unlock(VaultCredentials(key: key))
        try self.init(unlocked: unlocked, key: key, state: state, settings: settings, keepsBackup: keepsBackup)
    }

    /// A session on the version `unlocked` was read from (no second read); that version is
    /// remembered as this device's base when it is a new one.
    init(unlocked: UnlockedVault, key: CompositeKey, state: SyncStateStore, settings: DeviceSettings, keepsBackup: Bool) throws {
        self.path = unlocked.path
        self.keepsBackup = keepsBackup || settings.backups
        self.rotatesKDFSalt = settings.rotateKDFSalt
        self.state = state
        self.key = key
        self.limits = unlocked.file.limits
        self.vault = unlocked.opened.vault
        self.settings = unlocked.opened.settings
        self.derivedKey = unlocked.opened.derivedKey
        self.fingerprint = unlocked.file.fingerprint
        self.diskContent = (unlocked.opened.vault, unlocked.opened.settings)
        rememberBase(unlocked.file.bytes, unlocked.file.fingerprint, onlyIfNew: true, replaced: .stayPending)
    }

    /// The working snapshot with its format and derived key.
    public var opened: OpenedVault { OpenedVault(vault: vault, settings: settings, derivedKey: derivedKey) }

    /// Problems that did not stop the work (the sync state could not be updated, say).
    public internal(set) var warnings: [String] = []

    /// Records the synced version; a failure only costs the next merge its base, so it is a warning.
    /// `replaced`: whether the new base is known to hold the one it replaces (a save of this
    /// session's work does; a version read from disk may not, and the old one is kept pending).
    private func rememberBase(_ bytes: Data, _ fingerprint: Fingerprint, onlyIfNew: Bool = false, replaced: SyncStateStore.Replaced) {
        fileBytes = bytes
        do {
            if onlyIfNew {
                try state.recordIfNew(bytes, fingerprint: fingerprint, for: path, replaced: replaced)
            } else {
                try state.record(bytes, fingerprint: fingerprint, for: path, replaced: replaced)
            }
        } catch {
            warnings.append("the sync state could not be updated (\(error)); the next merge will infer its base")
        }
    }

    /// Resumes work on `path` with a working copy made elsewhere (`working`, e.g. a file of unsaved
    /// edits), based on `basedOn` or else the version this device last synced (the state's record):
    /// a save then sees any change made on disk since. `workingIsOnDisk`: `working` is the content of
    /// the file at `basedOn` (read by the caller), so a save that changes nothing writes nothing.
    public init(
        path: String, working: OpenedVault, key: CompositeKey, state: SyncStateStore, limits: ResourceLimits = .standard,
        basedOn explicit: Fingerprint? = nil, workingIsOnDisk: Bool = false, diskBytes: Data? = nil,
        settings: DeviceSettings, keepsBackup: Bool = false
    ) throws {
        guard let basedOn = explicit ?? state.base(for: path)?.record.fingerprint else {
            throw SaveError.changedOnDisk(current: try DurableFile.fingerprint(atPath: path, on: state.fileSystem))
        }
        self.path = path
        self.state = state
        self.key = key
        self.limits = limits
        self.keepsBackup = keepsBackup || settings.backups
        self.rotatesKDFSalt = settings.rotateKDFSalt
        self.vault = working.vault
        self.settings = working.settings
        self.derivedKey = working.derivedKey
        self.fingerprint = basedOn
        self.diskContent = workingIsOnDisk ? (working.vault, working.settings) : nil
        self.fileBytes = workingIsOnDisk ? diskBytes : nil
    }

    /// A session on the version of `context`'s vault read as `bytes` (`fingerprint`) and opened as
    /// `onDisk`, saving by the device's settings (backups, KDF salt rotation).
    package convenience init(context: VaultContext, onDisk: OpenedVault, bytes: Data, fingerprint: Fingerprint) throws {
        try self.init(path: context.path, working: onDisk, key: context.key, state: context.state, limits: context.limits,
                      basedOn: fingerprint, workingIsOnDisk: true, diskBytes: bytes, settings: context.settings)
    }

    /// Whether the working snapshot is exactly the content of the file this session knows (so a save
    /// has nothing to write).
    /// The KDF salt aside: a file that differs only by its salt holds the same content, and writing it
    /// again to change the salt alone would be a new version to every sync engine.
    public var matchesDisk: Bool {
        guard let diskContent, !credentialsAdopted else { return false }
        return Self.sameExceptSalt(diskContent.settings, settings) && diskContent.vault == vault
    }

    /// Whether `a` and `b` are the same format settings but for the KDF's salt (seed).
    private static func sameExceptSalt(_ a: FormatSettings, _ b: FormatSettings) -> Bool {
        var withSaltOfA = b
        switch (a.kdf, b.kdf) {
        case (.aesKDF(let seed, _), .aesKDF(_, let rounds)): withSaltOfA.kdf = .aesKDF(seed: seed, rounds: rounds)
        case (.argon2(let first), .argon2(var second)):
            second.salt = first.salt
            withSaltOfA.kdf = .argon2(second)
        default: return false
        }
        return a == withSaltOfA
    }

    /// The version on disk now, as a conflict to decide on, or nil when it is still this session's.
    public func diskChange() throws -> Conflict? {
        let current = try DurableFile.fingerprint(atPath: path, on: fileSystem)
        if let current, current.sameContent(as: fingerprint) && current.inode == fingerprint.inode { return nil }
        return try readDisk()
    }

    /// From the next save on, writes with `key` and `settings` (the vault's master key was changed on
    /// another device and the merge adopts it). The old sync-state base no longer opens with the new key.
    public func adoptCredentials(key: CompositeKey, settings: FormatSettings, derivedKey: DerivedKey) {
        self.key = key
        self.settings = settings
        self.derivedKey = derivedKey
        credentialsAdopted = true
    }

    /// From the next save on, writes in `settings` (a merge took another device's cipher, KDF or
    /// compression: MERGE.md rule 13), with the same key; the key is derived anew for a new KDF.
    package func adoptFormat(_ settings: FormatSettings) {
        self.settings = settings
    }

    /// Replaces the working snapshot (an edit made through the vault's edit functions).
    public func update(_ vault: Vault) {
        self.vault = vault
        comparesMergeWithFile = false
    }

    /// Replaces the working snapshot with a merge of the file's content and other versions: the next
    /// save writes only if the merge holds content the file lacks (`content` says whether that is
    /// known already or to be compared).
    package func takeMerge(_ vault: Vault, content: MergeContent) {
        self.vault = vault
        comparesMergeWithFile = content == .compareWithFile
    }

    /// Replaces the working snapshot with `vault`, the merge of the work with the version on disk in
    /// `conflict`: the session is based on that version from now on (the next save swaps it out).
    package func takeMerge(_ vault: Vault, over conflict: Conflict) {
        self.vault = vault
        comparesMergeWithFile = true
        fingerprint = conflict.diskFingerprint
        fileBytes = conflict.diskBytes
        diskContent = (conflict.disk.vault, conflict.disk.settings)
    }

    /// The version this session's work was made from: the file it read or last merged with, else
    /// the one this device last synced.
    package var workMadeFrom: Vault? { diskContent?.vault ?? base() }

    /// The format of the file this session's work was made from, when it read one (the ancestor of
    /// the cipher and KDF when another writer's version is merged in).
    package var workMadeFromFormat: FormatSettings? { diskContent?.settings }

    /// The rule every write after a merge obeys, in this one place: a merge whose content equals the
    /// file's is not written (its different form, access times or a new KDF salt would be a new
    /// version to every sync engine, and two devices writing the same merge make a new conflict).
    private var mergeAddsNothing: Bool {
        guard comparesMergeWithFile, let diskContent, !credentialsAdopted, Self.sameExceptSalt(diskContent.settings, settings) else { return false }
        return VaultDiff.sameContent(diskContent.vault, vault)
    }

    /// The vault this device last synced (from the state directory), if it opens with this key.
    public func base() -> Vault? {
        state.baseVault(for: path, key: key, cachedKey: derivedKey, limits: limits)
    }

    /// Writes the working snapshot if the file is still the version this session knows; otherwise
    /// returns the conflict and writes nothing.
    public func save() throws -> SaveOutcome {
        try holdingLock { try saveHoldingLock() }
    }

    /// Runs `body` holding this machine's lock on the vault (one writer at a time on this device);
    /// temp files of this vault left by dead writers are removed first.
    package func holdingLock<T>(_ body: () throws -> T) throws -> T {
        let lock = try state.lock(path)
        defer { lock.release() }
        let stale = DurableFile.removeStaleTemporaries(of: path, on: fileSystem)
        if !stale.isEmpty { warnings.append("removed \(stale.count) temp file(s) left by an interrupted save") }
        return try body()
    }

    /// Whether each save first keeps the version it replaces as `<vault>.bak` (0600).
    public let keepsBackup: Bool

    /// How long a save waits while a sync engine is transferring a new version of the vault (or a
    /// copy) into its folder: writing meanwhile makes the engine abandon its transfer ("file modified
    /// but not rescanned"), leave its temporary file and retry a minute later. After the wait the
    /// save proceeds (the compare-and-swap still sees any change).
    public let transferWait: Double = 10

    /// Whether each save draws a new KDF salt (seed), as KeePass and KeePassXC do: a transformed key
    /// that leaks once (keyring, memory, a lost device) then opens no later version of a file that
    /// sits on someone else's disks. It costs one KDF run per save here and one per reload on the
    /// other devices. Off (`{"rotateKDFSalt": false}` in the device settings) keeps the salt.
    public let rotatesKDFSalt: Bool

    /// Quick unlock kept in step: after each save (a new KDF salt) the kept key is replaced by the
    /// new one, so commands that only read keep opening without the password (`keepInStep`).
    public private(set) var quickUnlock: QuickUnlock?

    /// Keeps `quickUnlock`'s key for this vault in step with the file from now on (and at once).
    public func keepInStep(_ quickUnlock: QuickUnlock) {
        self.quickUnlock = quickUnlock
        quickUnlock.refresh(path: path, with: derivedKey)
    }

    #if MYPASS_TEST_HOOKS
    /// Test hook: runs just before each replace attempt (a test makes "another writer" act there).
    /// Debug builds only (`MYPASS_TEST_HOOKS`): a release build has no such seam.
    package var beforeReplace: (() -> Void)?
    #endif

    /// `save`, the lock held by the caller (`holdingLock`).
    package func saveHoldingLock() throws -> SaveOutcome {
        replacedBytes = nil
        if diskContent == nil { learnDiskContent() }
        if matchesDisk { return .unchanged(fingerprint) }
        if mergeAddsNothing, let diskContent {
            // The file holds everything merged: it is the version this device has synced now.
            vault = diskContent.vault
            if let fileBytes { rememberBase(fileBytes, fingerprint, onlyIfNew: true, replaced: .contained) }
            return .unchanged(fingerprint)
        }
        if keepsBackup { try writeNeighbourBackup() }
        #if MYPASS_TEST_HOOKS
        beforeReplace?()
        #endif
        SyncTransfers.waitWhileInProgress(for: path, on: fileSystem, limit: transferWait)
        var writeSettings = settings
        if rotatesKDFSalt { writeSettings.kdf = try settings.kdf.withFreshSalt() }
        let encoded = try KDBXWriter.encode(vault, settings: writeSettings, key: key, cachedKey: derivedKey, limits: limits)
        let (file, derived) = (encoded.file, encoded.derivedKey)
        do {
            let written = try DurableFile.replace(atPath: path, on: fileSystem, with: file, policy: .onlyIf(fingerprint), symlinks: .writeTarget, verify: { bytes in
                try VerifiedEncoding.verify(bytes, matches: encoded, limits: self.limits)
            }, mayReplace: { SyncTransfers.inProgress(for: self.path, on: fileSystem).isEmpty })
            replacedBytes = fileBytes
            fingerprint = written
            settings = writeSettings
            derivedKey = derived
            diskContent = (vault, settings)
            credentialsAdopted = false
            rememberBase(file, written, replaced: .contained)
            noteFile(written)
            quickUnlock?.refresh(path: path, with: derived)
            return .saved(written)
        } catch SaveError.changedOnDisk {
            return .conflict(try readDisk())
        }
    }

    /// Keeps which file the vault now is (`SeenVaultFiles`): if a sync engine renames it aside with
    /// another device's version (rclone bisync), the watcher knows the copy as this device's own
    /// even when no watcher saw this save. A failure is a warning, like the base's.
    private func noteFile(_ written: Fingerprint) {
        guard let identity = FileIdentity.of(DurableFile.resolvedPath(path, on: fileSystem), on: fileSystem), identity.inode == written.inode else { return }
        do {
            try SeenVaultFiles(state: state, vaultPath: path).note(identity)
        } catch {
            warnings.append("the sync state could not be updated (\(error))")
        }
    }

    /// Reads the file when it is still the version this session is based on, so that a save can tell
    /// whether it would change anything (a session resumed from a working copy made elsewhere).
    private func learnDiskContent() {
        guard let file = try? VaultFile.read(path, on: fileSystem, limits: limits),
              file.fingerprint.sameContent(as: fingerprint) && file.fingerprint.inode == fingerprint.inode,
              let opened = try? file.open(key: key, cachedKey: derivedKey) else { return }
        diskContent = (opened.vault, opened.settings)
        fileBytes = file.bytes
    }

    /// Copies the version about to be replaced to `<vault>.bak` (only if it is the one this session knows).
    private func writeNeighbourBackup() throws {
        let current = try DurableFile.read(atPath: path, on: fileSystem)
        guard current.fingerprint.sameContent(as: fingerprint) else { return }
        try AtomicFileWriter.write(current.bytes, toPath: DurableFile.resolvedPath(path, on: fileSystem) + ".bak", on: fileSystem)
    }

    /// The version on disk now, read and opened.
    package func readDisk() throws -> Conflict {
        let file = try VaultFile.read(path, on: fileSystem, limits: limits)
        return Conflict(disk: try file.open(key: key, cachedKey: derivedKey), diskBytes: file.bytes, diskFingerprint: file.fingerprint)
    }

    /// Takes the disk version of `conflict` as the working snapshot; the working copy is kept as a backup.
    package func reload(_ conflict: Conflict) throws -> Resolution {
        try holdingLock { try reloadHoldingLock(conflict) }
    }

    /// Writes the working snapshot over the disk version of `conflict` (and any newer one that
    /// arrives meanwhile, up to `maximumAttempts` times; then `SaveError.changedOnDisk`); the disk
    /// version is kept as a backup.
    package func overwrite(_ conflict: Conflict) throws -> Resolution {
        try holdingLock { try overwriteHoldingLock(conflict, attempts: Self.maximumAttempts) }
    }

    /// Takes the disk version as the working snapshot; the working copy is kept as a backup.
    private func reloadHoldingLock(_ conflict: Conflict) throws -> Resolution {
        let backup = try writeBackup(of: vault, suffix: "working")
        vault = conflict.disk.vault
        settings = conflict.disk.settings
        fingerprint = conflict.diskFingerprint
        diskContent = (conflict.disk.vault, conflict.disk.settings)
        comparesMergeWithFile = false
        rememberBase(conflict.diskBytes, conflict.diskFingerprint, replaced: .stayPending)
        return Resolution(decision: .reload, changes: VaultDiff.diff(from: conflict.disk.vault, to: vault), warnings: [], backup: backup,
                          wroteFile: false)
    }

    /// Writes the working snapshot over exactly the version on disk read as `bytes` (`fingerprint`,
    /// opened as `disk`), the watcher's overwrite: a version written since is not overwritten
    /// (`SaveError.changedOnDisk`). The disk version is kept as a backup.
    package func overwrite(_ disk: OpenedVault, bytes: Data, fingerprint: Fingerprint) throws -> Resolution {
        try holdingLock { try overwriteHoldingLock(Conflict(disk: disk, diskBytes: bytes, diskFingerprint: fingerprint), attempts: 1) }
    }

    /// Writes the working snapshot over the disk version (and, within `attempts`, any newer one that
    /// arrives meanwhile); the disk version is kept as a backup.
    private func overwriteHoldingLock(_ conflict: Conflict, attempts: Int) throws -> Resolution {
        var current = conflict
        for attempt in 1...attempts {
            fingerprint = current.diskFingerprint
            fileBytes = current.diskBytes
            diskContent = (current.disk.vault, current.disk.settings)
            let backup = matchesDisk ? nil : try writeBackup(bytes: current.diskBytes, suffix: "disk")
            if let wrote = try saveHoldingLock().wroteFile {
                return Resolution(decision: .overwrite, changes: VaultDiff.diff(from: current.disk.vault, to: vault), warnings: [],
                                  backup: backup, wroteFile: wrote)
            }
            if attempt < attempts { current = try readDisk() }
        }
        throw SaveError.changedOnDisk(current: current.diskFingerprint)
    }

    private func writeBackup(of vault: Vault, suffix: String) throws -> String {
        let (bytes, _) = try KDBXWriter.serialize(vault, settings: settings, key: key, cachedKey: derivedKey, limits: limits)
        return try writeBackup(bytes: bytes, suffix: suffix)
    }

    /// A 0600 copy beside the state (never in the synced folder, where it would be synced too).
    private func writeBackup(bytes: Data, suffix: String) throws -> String {
        try state.prepare()
        let stamp = Int(Date().timeIntervalSince1970)
        let backup = state.stem(for: path) + ".\(suffix)-\(stamp).kdbx"
        try AtomicFileWriter.write(bytes, toPath: backup, on: fileSystem)
        return backup
    }
}

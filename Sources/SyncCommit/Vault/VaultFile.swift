package import Foundation
public import SyncFiles
internal import SyncState
public import KDBXFormat
public import MyPassCore
internal import MyPassCrypto

/// One read of a vault file: its bytes, the version read (fingerprint) and its unencrypted header.
/// Reading checks that it is a KDBX file and that its KDF is within the resource caps, so a caller
/// finds out before asking for a password; unlocking uses these bytes (the file is read once).
/// This is the only way the tool and an app open a vault file.
public struct VaultFile: Sendable {
    /// The path as the caller named it.
    public let path: String
    /// The version that was read.
    public let fingerprint: Fingerprint
    package let bytes: Data
    let header: OuterHeader
    /// The resource caps every open of this vault (its copies, its base) uses.
    public let limits: ResourceLimits
    /// The file system it was read from (a new file made from it is written there too).
    public let fileSystem: FileSystem

    /// Reads `path` on `fileSystem` once and checks its header and KDF against `limits` (default
    /// caps, with `maximumKDFMemory` when given).
    public static func read(_ path: String, on fileSystem: FileSystem = .real, maximumKDFMemory: UInt64? = nil) throws -> VaultFile {
        try read(path, on: fileSystem, limits: userLimits(maximumKDFMemory: maximumKDFMemory))
    }

    /// The caps for a vault the user opens: the defaults, with `maximumKDFMemory` when given.
    public static func userLimits(maximumKDFMemory: UInt64?) -> VaultLimits {
        var limits = ResourceLimits.standard
        if let maximumKDFMemory { limits.maximumArgon2MemoryBytes = maximumKDFMemory }
        return limits
    }

    /// Reads a version of a vault that did not come from this device (a git blob for textconv) once,
    /// within `budget` (`ForeignVersion`): its size before reading, its KDF before any password is
    /// asked for; every open of it is held to the budget's caps. A symlink is followed only when
    /// `followSymlinks` (a file the user named, not one found in a synced folder).
    public static func read(
        _ path: String, on fileSystem: FileSystem = .real, within budget: ForeignVersionBudget, followSymlinks: Bool = true
    ) throws -> VaultFile {
        let (bytes, fingerprint) = try ForeignVersion.read(atPath: path, on: fileSystem, followSymlinks: followSymlinks, budget: budget)
        let header = try KDBXReader.header(of: bytes)
        try header.kdf.check(against: budget.limits)
        return VaultFile(path: path, fingerprint: fingerprint, bytes: bytes, header: header, limits: budget.limits, fileSystem: fileSystem)
    }

    /// How many different keys may be derived for this file within `budget` (keyring candidates).
    public func derivations(within budget: ForeignVersionBudget, atMost maximum: Int) -> Int {
        budget.derivations(of: header.kdf, atMost: maximum)
    }

    /// Reads `path` once and checks its header, and its KDF against `limits` unless `checksKDF` is
    /// false (a quick unlock runs no KDF).
    static func read(_ path: String, on fileSystem: FileSystem, limits: ResourceLimits, checksKDF: Bool = true) throws -> VaultFile {
        let (bytes, fingerprint) = try DurableFile.read(atPath: path, on: fileSystem)
        let header = try KDBXReader.header(of: bytes)
        if checksKDF { try header.kdf.check(against: limits) }
        return VaultFile(path: path, fingerprint: fingerprint, bytes: bytes, header: header, limits: limits, fileSystem: fileSystem)
    }

    /// The format facts of the vault at `path` (no credentials: the header is not encrypted).
    public static func format(at path: String, on fileSystem: FileSystem = .real) throws -> VaultFormat {
        VaultFormat(try KDBXReader.header(of: FileReading.readAll(atPath: path, on: fileSystem)))
    }

    /// The format of this file.
    public var format: VaultFormat { VaultFormat(header) }

    /// The budget for opening a version of this vault that did not come from this device: the
    /// server's, a merge input, a base given (`ForeignVersionBudget`).
    package var foreignVersionBudget: ForeignVersionBudget {
        ForeignVersionBudget(vaultSize: bytes.count, vaultKDF: header.kdf, within: limits)
    }

    /// Decrypts and parses the file with `credentials`.
    public func unlock(_ credentials: VaultCredentials) throws -> UnlockedVault {
        UnlockedVault(file: self, opened: try open(key: credentials.key), credentials: credentials)
    }

    /// The file's vault opened with `key`, reusing `cachedKey` where the KDF salt matches (no KDF run).
    func open(key: CompositeKey, cachedKey: DerivedKey? = nil) throws -> OpenedVault {
        try KDBXReader.open(bytes, key: key, cachedKey: cachedKey, limits: limits)
    }

    /// Opens the file with the key `quickUnlock` keeps for it (no password, no KDF run); nil when no
    /// key is kept or the kept one was derived for another salt. Such a vault can be read, not saved.
    public func unlockQuickly(_ quickUnlock: QuickUnlock = QuickUnlock()) throws -> UnlockedVault? {
        guard let opened = try quickUnlock.open(bytes, path: path, limits: limits) else { return nil }
        return UnlockedVault(file: self, opened: opened, credentials: nil)
    }

    /// Unlocks this file, then reads and opens `copies` (other versions of it) in parallel, one per
    /// core, after one KDF run: copies that share this file's KDF salt and credentials reuse it.
    /// What a copy holds unchanged from this file takes the storage of this file's vault (a merge
    /// holds about one vault's memory, not one per copy).
    /// `copyCredentials` (default: these) open the copies; each copy's outcome is returned as it is.
    /// The copies came from elsewhere (another device, git, Unison): they are read and opened within
    /// the budget for such versions (`ForeignVersionBudget`), which this file's own version always fits.
    public func unlock(
        _ credentials: VaultCredentials, withCopies copies: [String], copyCredentials: VaultCredentials? = nil
    ) throws -> (vault: UnlockedVault, copies: [Result<VaultCopy, KDBXError>]) {
        let copyKey = (copyCredentials ?? credentials).key
        let budget = foreignVersionBudget
        let files = try copies.map { try ForeignVersion.read(atPath: $0, on: fileSystem, followSymlinks: true, budget: budget).bytes }
        let derived = try DerivedKey(compositeKey: credentials.key, kdf: header.kdf, limits: limits, version: header.version)  // the header read above
        let vault = UnlockedVault(file: self, opened: try open(key: credentials.key, cachedKey: derived), credentials: credentials)
        let opened = ForeignVersion.open(files.map { ($0, copyKey) }, cachedKey: derived, budget: budget, sharingStorageWith: vault.vault)
        let results = zip(copies, opened).map { path, result in
            result.map { VaultCopy(path: path, opened: $0, credentials: copyCredentials ?? credentials) }
        }
        // What was merged, as read (a journal names these bytes, not whatever is there later).
        let hashed = zip(results, files).map { result, bytes in result.map { $0.hashing(bytes) } }
        return (vault, hashed)
    }
}

/// Another version of a vault (a remote, a conflict copy, a base), opened.
public struct VaultCopy: Sendable {
    /// The copy's path.
    public let path: String
    let opened: OpenedVault
    let credentials: VaultCredentials
    /// SHA-256 (hex) of the bytes opened, when the copy was read for a merge.
    private(set) var bytesSHA256: String?

    /// The copy's content.
    public var vault: Vault { opened.vault }

    /// This copy, knowing that `bytes` were what it was opened from.
    func hashing(_ bytes: Data) -> VaultCopy {
        var copy = self
        copy.bytesSHA256 = SHA256.hexHash(bytes)
        return copy
    }
}

/// The caps a vault is opened within (KDF cost, payload size), as the commands pass them around.
public typealias VaultLimits = ResourceLimits

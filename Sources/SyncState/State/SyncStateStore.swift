public import Foundation
public import SyncFiles
internal import MyPassCrypto
package import KDBXFormat
package import MyPassCore
#if canImport(Glibc)
internal import Glibc
#endif
internal import Synchronization

/// What this device remembers per vault, outside the synced folder: the exact bytes of the version it
/// last read or wrote (the merge base; encrypted with the vault's own key, so nothing secret is added)
/// and that version's fingerprint. Directory 0700, files 0600; one lock file per vault serialises this
/// machine's writers (`flock`).
public struct SyncStateStore: Sendable {
    /// The state directory.
    public let directory: String
    /// The file system the state and the vaults it is kept for are on (a test's fake, else the real one).
    public let fileSystem: FileSystem

    /// The record of one vault.
    public struct Record: Codable, Sendable, Equatable {
        /// The vault's resolved path.
        public var path: String
        /// The fingerprint of the version remembered.
        public var fingerprint: Fingerprint
    }

    /// `explicit`, else `$XDG_STATE_HOME/mypass-sync`, else `~/.local/state/mypass-sync`; on
    /// `fileSystem`, which every job given this store works on.
    public init(directory explicit: String? = nil, on fileSystem: FileSystem = .real) {
        self.fileSystem = fileSystem
        if let explicit {
            directory = explicit
        } else if let state = ProcessInfo.processInfo.environment["XDG_STATE_HOME"], !state.isEmpty {
            directory = state + "/mypass-sync"
        } else {
            directory = (ProcessInfo.processInfo.environment["HOME"] ?? NSHomeDirectory()) + "/.local/state/mypass-sync"
        }
    }

    /// The file-name stem for `vaultPath`: two vaults with the same name in different folders differ.
    package func stem(for vaultPath: String) -> String {
        let resolved = DurableFile.canonicalPath((vaultPath as NSString).standardizingPath, on: fileSystem)
        let absolute = resolved.hasPrefix("/") ? resolved : FileManager.default.currentDirectoryPath + "/" + resolved
        let digest = SHA256.hexHash(Data(absolute.utf8), prefix: 12)
        return directory + "/" + PathText.name(of: absolute) + "-" + digest
    }

    /// Throws unless the directory is absent (it is made 0700 when first written) or private: a real
    /// directory of this user's that no one else may write in (another user could forge the base,
    /// the journal or the failures kept there).
    public func checkPrivate() throws(FileError) {
        guard SystemCalls.status(atPath: directory, on: fileSystem) != nil else { return }
        _ = try DirectoryHandle.privateDirectory(directory, on: fileSystem)
    }

    /// Creates the directory (0700) if needed; an existing one must be a private real directory.
    package func prepare() throws(FileError) {
        _ = try DirectoryHandle.privateDirectory(directory, on: fileSystem)
    }

    /// The remembered base of `vaultPath`, if any.
    public func base(for vaultPath: String) -> (record: Record, bytes: Data)? {
        let stem = stem(for: vaultPath)
        guard let record = storedRecord(stem),
              let bytes = try? FileReading.readAll(atPath: stem + ".base.kdbx", on: fileSystem, followSymlinks: false),
              SHA256.hexHash(bytes) == record.fingerprint.sha256 else { return nil }
        return (record, bytes)
    }

    /// The version of `vaultPath` this device last synced, opened with `key` (reusing `cachedKey`
    /// where the KDF salt matches); nil when there is none or it does not open.
    /// `read`: the base already read with `base(for:)` (else it is read here). `sharingStorageWith`:
    /// the vault in memory it is merged with, whose storage its unchanged versions take.
    package func baseVault(
        for vaultPath: String, read: (record: Record, bytes: Data)? = nil, key: CompositeKey, cachedKey: DerivedKey?, limits: ResourceLimits,
        sharingStorageWith donor: Vault? = nil
    ) -> Vault? {
        guard let (_, bytes) = read ?? base(for: vaultPath) else { return nil }
        return try? KDBXReader.open(bytes, key: key, cachedKey: cachedKey, limits: limits, sharingStorageWith: donor).vault
    }

    /// Whether the version a new base replaces is known to be contained in the new one.
    public enum Replaced: Sendable {
        /// The new base descends from it (a save of this device's own work over it, a merge of it).
        case contained
        /// Not known: the replaced version is kept among the `PendingVersions` until the watcher finds
        /// a version of the vault that holds it (a version read from disk may have been written over it).
        case stayPending
    }

    /// The record of the remembered base of `vaultPath` when its bytes are intact (hashed as they
    /// are read, never held whole: an open vault's command checks it beside the vault in memory).
    public func baseRecord(for vaultPath: String) -> Record? {
        let stem = stem(for: vaultPath)
        guard let record = storedRecord(stem),
              let digest = try? FileReading.sha256(atPath: stem + ".base.kdbx", on: fileSystem, followSymlinks: false),
              digest == record.fingerprint.sha256 else { return nil }
        return record
    }

    /// The record kept beside the base whose files start with `stem`, if it reads.
    private func storedRecord(_ stem: String) -> Record? {
        guard let json = try? FileReading.readAll(atPath: stem + ".json", on: fileSystem, followSymlinks: false) else { return nil }
        return try? JSONDecoder().decode(Record.self, from: json)
    }

    /// Remembers `bytes` as the base of `vaultPath` unless the remembered base is this content already.
    public func recordIfNew(_ bytes: Data, fingerprint: Fingerprint, for vaultPath: String, replaced: Replaced = .stayPending) throws(FileError) {
        guard baseRecord(for: vaultPath)?.fingerprint.sameContent(as: fingerprint) != true else { return }
        try record(bytes, fingerprint: fingerprint, for: vaultPath, replaced: replaced)
    }

    /// Remembers `bytes` (fingerprint `fingerprint`) as the version of `vaultPath` this device has synced;
    /// the version it replaces is kept pending unless `replaced` says the new one contains it.
    public func record(_ bytes: Data, fingerprint: Fingerprint, for vaultPath: String, replaced: Replaced) throws(FileError) {
        try prepare()
        if replaced == .stayPending, let previous = base(for: vaultPath), !previous.record.fingerprint.sameContent(as: fingerprint) {
            try PendingVersions(state: self, vaultPath: vaultPath).add(previous.bytes)
        }
        let stem = stem(for: vaultPath)
        let record = Record(path: DurableFile.resolvedPath(vaultPath, on: fileSystem), fingerprint: fingerprint)
        let json: Data
        do { json = try JSONEncoder().encode(record) } catch { throw .system(operation: .encode, path: stem, errno: EINVAL, message: "\(error)") }
        // Atomic but not fsynced: after a power cut the state is at worst one sync old, which only
        // gives the next merge an older (still common) base.
        for (data, path) in [(bytes, stem + ".base.kdbx"), (json, stem + ".json")] {
            do {
                _ = try DurableFile.replace(atPath: path, on: fileSystem, with: data, policy: .anything, durable: false)
            } catch {
                if case .file(let fileError) = error { throw fileError }
                throw .system(operation: .write, path: path, errno: EIO, message: error.description)
            }
        }
    }

    /// Takes this machine's write lock for `vaultPath` (blocks until other writers release it).
    public func lock(_ vaultPath: String) throws(FileError) -> WriterLock {
        try prepare()
        let path = stem(for: vaultPath) + ".lock"
        guard let file = SystemCalls.lockFile(path, on: fileSystem) else { throw FileReading.error(errno, .lock, path) }
        return WriterLock(file)
    }
}

/// An exclusive `flock` held until `release()` or deinit.
public final class WriterLock: Sendable {
    /// The locked file: closing it gives the lock back.
    private let file: Mutex<FileDescriptor?>

    init(_ file: consuming FileDescriptor) {
        self.file = Mutex(.some(file))
    }

    /// Gives the lock back.
    public func release() {
        file.withLock { $0 = nil }
    }
}

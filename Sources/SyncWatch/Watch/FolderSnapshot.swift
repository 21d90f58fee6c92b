internal import Foundation
public import SyncFiles
internal import SyncState
internal import SyncCommit

/// One conflict copy as the folder listing saw it.
public struct CopyFile: Sendable, Hashable {
    /// The copy's path.
    public let path: String
    /// The sync engine whose naming it follows.
    public let engine: ConflictCopies.Engine
    /// Its inode (a copy whose inode the vault had is this device's own version, renamed aside).
    public let inode: UInt64
    /// Its size in bytes.
    public let size: Int64
    /// Its modification time.
    public let modified: FileTime
    /// When it was created (nil: the file system keeps no birth time): with the inode, what says it
    /// is a file the vault once was (`FileIdentity`), and how long ago it arrived.
    public let born: FileTime?
    /// The device it is on.
    public let device: UInt64
    /// When its status last changed (ctime): for a copy that arrived as a new file and was not
    /// renamed since, when it arrived.
    public let changed: FileTime?

    /// The copy as the listing saw it.
    public init(path: String, engine: ConflictCopies.Engine, inode: UInt64, size: Int64, modified: FileTime, born: FileTime? = nil,
                device: UInt64 = 0, changed: FileTime? = nil) {
        self.path = path
        self.engine = engine
        self.inode = inode
        self.size = size
        self.modified = modified
        self.born = born
        self.device = device
        self.changed = changed
    }

    /// When it arrived in the folder, as the file system says (its birth time, else its ctime).
    var arrived: Date? {
        (born ?? changed).map { Date(timeIntervalSince1970: Double($0.seconds) + Double($0.nanoseconds) / 1e9) }
    }

    /// The copy as `ConflictCopies` names it.
    var copy: ConflictCopies.Copy { ConflictCopies.Copy(path: path, engine: engine) }
    /// Which file it is.
    var identity: FileIdentity { FileIdentity(device: device, inode: inode, born: born, size: size, modified: modified) }

    /// The same copy as it was: name, engine, inode, size and time (what a failed copy is remembered by).
    public static func == (a: CopyFile, b: CopyFile) -> Bool {
        a.path == b.path && a.engine == b.engine && a.inode == b.inode && a.size == b.size && a.modified == b.modified
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(path)
        hasher.combine(inode)
        hasher.combine(size)
        hasher.combine(modified)
    }
}

/// One listing of a vault's folder, taken once per check: the vault, its conflict copies and the
/// sync engine's transfers in flight. Everything the reconciler decides on comes from here.
public struct FolderSnapshot: Sendable {
    /// The vault file.
    public enum VaultPresence: Sendable {
        /// Not there (deleted, or being replaced by a sync engine).
        case missing
        /// There but not readable, or a symlink (the message says why): left alone.
        case failed(String)
        /// There: the version read.
        case present(Fingerprint)
    }

    /// The vault file.
    public let vault: VaultPresence
    /// Temporary files of a sync engine transferring the vault or a copy into the folder.
    public let transfers: [String]
    /// The conflict copies beside the vault.
    public let copies: [CopyFile]
    /// Which file the vault is (nil: not there, or not examined).
    public let vaultIdentity: FileIdentity?

    /// A snapshot of these parts (tests build them in memory).
    public init(vault: VaultPresence, transfers: [String] = [], copies: [CopyFile] = [], vaultIdentity: FileIdentity? = nil) {
        self.vault = vault
        self.transfers = transfers
        self.copies = copies
        self.vaultIdentity = vaultIdentity
    }

    /// The folder of the vault at `path` on `fileSystem` as it is now (copies named by `naming`), with
    /// the vault's bytes when it was read; a vault file larger than `vaultSizeLimit` is not read (a
    /// sparse file of gigabytes planted in its place must not fill the memory).
    static func take(
        of path: String, on fileSystem: FileSystem, naming: ConflictCopies.Naming, vaultSizeLimit: Int64 = FileReading.maximumSize
    ) -> (snapshot: FolderSnapshot, bytes: Data?) {
        let transfers = SyncTransfers.inProgress(for: path, on: fileSystem)
        let copies = ConflictCopies.find(for: path, on: fileSystem, naming: naming).compactMap { copy -> CopyFile? in
            guard let (identity, changed) = SystemCalls.identity(atPath: copy.path, on: fileSystem) else { return nil }
            return CopyFile(path: copy.path, engine: copy.engine, inode: identity.inode, size: identity.size,
                            modified: identity.modified, born: identity.born, device: identity.device, changed: changed)
        }
        guard transfers.isEmpty else { return (FolderSnapshot(vault: .missing, transfers: transfers, copies: copies), nil) }
        do {
            // Never through a symlink: a vault that became one is refused, neither read nor written.
            let current = try DurableFile.read(atPath: path, on: fileSystem, followSymlinks: false, limit: vaultSizeLimit)
            // The identity of the file read (examined by name after the read: another file there by
            // then has another inode and is not taken for it).
            let identity = FileIdentity.of(DurableFile.resolvedPath(path, on: fileSystem), on: fileSystem).flatMap {
                $0.inode == current.fingerprint.inode && $0.device == current.fingerprint.device ? $0 : nil
            }
            return (FolderSnapshot(vault: .present(current.fingerprint), copies: copies, vaultIdentity: identity), current.bytes)
        } catch .notFound {
            return (FolderSnapshot(vault: .missing, copies: copies), nil)
        } catch .tooLarge(_, let size) {
            let message = "the vault file is \(size) bytes, far larger than the version this device synced (at most \(vaultSizeLimit) "
                + "bytes are read); not read"
            return (FolderSnapshot(vault: .failed(message), copies: copies), nil)
        } catch {
            if SystemCalls.status(atPath: path, on: fileSystem)?.isSymbolicLink == true {
                return (FolderSnapshot(vault: .failed(symlinkRefusal), copies: copies), nil)
            }
            return (FolderSnapshot(vault: .failed("\(error)"), copies: copies), nil)
        }
    }

    /// Why a vault whose path became a symlink is left alone (until a regular file is there again).
    static let symlinkRefusal = "the vault is now a symlink; it is neither read nor written through one (a copy would be merged into "
        + "whatever it points to): put the vault file itself back in its place"
}

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

    /// The copy as `ConflictCopies` names it.
    var copy: ConflictCopies.Copy { ConflictCopies.Copy(path: path, engine: engine) }
}

/// One listing of a vault's folder, taken once per check: the vault, its conflict copies and the
/// sync engine's transfers in flight. Everything the reconciler decides on comes from here.
public struct FolderSnapshot: Sendable {
    /// The vault file.
    public enum VaultFile: Sendable {
        /// Not there (deleted, or being replaced by a sync engine).
        case missing
        /// There but not readable (the message says why).
        case failed(String)
        /// There: the version read.
        case present(Fingerprint)
    }

    /// The vault file.
    public let vault: VaultFile
    /// Temporary files of a sync engine transferring the vault or a copy into the folder.
    public let transfers: [String]
    /// The conflict copies beside the vault.
    public let copies: [CopyFile]

    /// A snapshot of these parts (tests build them in memory).
    public init(vault: VaultFile, transfers: [String] = [], copies: [CopyFile] = []) {
        self.vault = vault
        self.transfers = transfers
        self.copies = copies
    }

    /// The folder of the vault at `path` as it is now, with the vault's bytes when it was read.
    static func take(of path: String) -> (snapshot: FolderSnapshot, bytes: Data?) {
        let transfers = SyncTransfers.inProgress(for: path)
        let copies = ConflictCopies.find(for: path).compactMap { copy -> CopyFile? in
            guard let status = SystemCalls.status(atPath: copy.path) else { return nil }
            return CopyFile(path: copy.path, engine: copy.engine, inode: status.inode, size: status.size,
                            modified: status.modified)
        }
        guard transfers.isEmpty else { return (FolderSnapshot(vault: .missing, transfers: transfers, copies: copies), nil) }
        do {
            let current = try DurableFile.read(atPath: path)
            return (FolderSnapshot(vault: .present(current.fingerprint), copies: copies), current.bytes)
        } catch .notFound {
            return (FolderSnapshot(vault: .missing, copies: copies), nil)
        } catch {
            return (FolderSnapshot(vault: .failed("\(error)"), copies: copies), nil)
        }
    }
}

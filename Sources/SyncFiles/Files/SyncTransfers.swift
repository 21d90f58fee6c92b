public import Foundation
#if canImport(Glibc)
internal import Glibc
#endif

/// Files a sync engine is still transferring into the folder of a vault: it downloads into a
/// temporary name beside the target and renames it over the target when complete. While such a file
/// of the vault or of one of its conflict copies is being written, reading the vault sees a version
/// about to be replaced, and writing it makes the engine's rename fail ("file modified but not
/// rescanned") or a new conflict. Each engine's temporary names are part of its `SyncEngine`.
/// A temporary file untouched for `staleAfter` seconds is an interrupted transfer the engine left
/// behind (Syncthing keeps them for a day to resume), not one in progress.
public enum SyncTransfers {
    /// A temporary file that has not changed for this long belongs to no transfer in progress.
    public static let staleAfter: TimeInterval = 15

    /// The temporary files of transfers in progress into `vaultPath` or its conflict copies.
    public static func inProgress(
        for vaultPath: String, on fileSystem: FileSystem, now: Date = Date(), staleAfter: TimeInterval = staleAfter
    ) -> [String] {
        guard let (directory, vaultName) = try? DirectoryHandle.parent(of: vaultPath, on: fileSystem) else { return [] }
        return directory.names().filter { name in
            guard let target = targetName(ofTemporary: name),
                  target == vaultName || ConflictCopies.engine(ofName: target, forVaultNamed: vaultName) != nil,
                  let status = directory.status(of: name) else { return false }
            let modified = status.modifiedSeconds
            return now.timeIntervalSince1970 - modified < staleAfter
        }
    }

    /// Waits while a transfer into `vaultPath` or its copies is in progress, at most `limit` seconds.
    /// Returns whether none is in progress now.
    @discardableResult
    public static func waitWhileInProgress(for vaultPath: String, on fileSystem: FileSystem, limit: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(limit)
        while !inProgress(for: vaultPath, on: fileSystem).isEmpty {
            guard Date() < deadline else { return false }
            usleep(100_000)
        }
        return true
    }

    /// The name a sync engine's temporary file `name` will be renamed to, if it is one (each
    /// engine's temporaries are its own: `SyncEngine`).
    public static func targetName(ofTemporary name: String) -> String? {
        SyncEngine.target(ofTemporary: name)
    }
}

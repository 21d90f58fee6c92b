public import Foundation
public import SyncCommit
internal import SyncState
public import SyncFiles

/// The vault as git's merge driver (`mypass-sync git merge-driver [options] -- %O %A %B %P`): a three-way merge
/// of git's current version (`%A`) and the other branch's (`%B`) against their common ancestor
/// (`%O`), the result written into `%A` only once the merge succeeded (git keeps whatever `%A`
/// holds when a driver fails, and marks the conflict). Git's temporary files are not journaled in
/// this device's sync state.
public enum GitMergeDriver {
    /// Merges `other` into `current` against `ancestor` (an empty file: the branches share none,
    /// each entry's ancestor is then inferred from history), writing the result over `current`; all
    /// three on `fileSystem`, written as this device's `settings` say (KDF salt rotation).
    public static func merge(
        ancestor: String, current: String, other: String, on fileSystem: FileSystem, credentials: VaultCredentials, settings: DeviceSettings
    ) throws -> MergeReport {
        let file = try VaultFile.read(current, on: fileSystem)
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("mypass-sync-git-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(at: scratch) }
        var request = FileMerge.Request(copies: [other], state: SyncStateStore(directory: scratch.path, on: file.fileSystem),
                                        settings: settings)
        let hasAncestor = (SystemCalls.status(atPath: ancestor, on: file.fileSystem)?.size ?? 0) > 0
        request.basePath = hasAncestor ? ancestor : nil
        request.outputPath = current
        return try FileMerge.run(request, on: file, credentials: credentials)
    }
}

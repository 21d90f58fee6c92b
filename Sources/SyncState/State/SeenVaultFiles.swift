public import Foundation
public import SyncFiles
#if canImport(Glibc)
internal import Glibc
#endif

/// The files the vault has been on this device, newest last (`FileIdentity`), kept in the sync state
/// so that a later run still knows them: when a sync engine renames both versions aside and leaves
/// no vault (rclone bisync), the copy that is one of these files is this device's own version, and
/// this device is the one that rebuilds the vault. Bounded to the newest `maximumCount`.
public struct SeenVaultFiles: Sendable {
    /// How many identities are kept per vault.
    public static let maximumCount = 16

    /// The state directory they are kept in.
    public let state: SyncStateStore
    /// The vault they are files of.
    public let vaultPath: String

    /// The files seen as the vault at `vaultPath`.
    public init(state: SyncStateStore, vaultPath: String) {
        self.state = state
        self.vaultPath = vaultPath
    }

    private var path: String { state.stem(for: vaultPath) + ".files.json" }

    /// The identities kept, oldest first (none when nothing was kept or the file does not parse).
    public func list() -> [FileIdentity] {
        guard let json = try? FileReading.readAll(atPath: path, on: state.fileSystem, followSymlinks: false, limit: 64 * 1024) else { return [] }
        return (try? JSONDecoder().decode([FileIdentity].self, from: json)) ?? []
    }

    /// Adds `identity` (newest) unless it is the newest already; beyond the bound the oldest go.
    /// Atomic, not fsynced: after a power cut the list is at worst one file short.
    public func note(_ identity: FileIdentity) throws(FileError) {
        var identities = list()
        guard identities.last != identity else { return }
        identities.removeAll { $0 == identity }
        identities.append(identity)
        if identities.count > Self.maximumCount { identities.removeFirst(identities.count - Self.maximumCount) }
        try state.prepare()
        let json: Data
        do { json = try JSONEncoder().encode(identities) } catch { throw .system(operation: .encode, path: path, errno: EINVAL, message: "\(error)") }
        do {
            _ = try DurableFile.replace(atPath: path, on: state.fileSystem, with: json, policy: .anything, durable: false)
        } catch {
            if case .file(let fileError) = error { throw fileError }
            throw .system(operation: .write, path: path, errno: EIO, message: error.description)
        }
    }
}

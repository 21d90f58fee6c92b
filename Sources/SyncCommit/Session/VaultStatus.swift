public import Foundation
public import SyncFiles
public import SyncState

/// Where a vault stands on this device, without a password (`status`): has it changed on disk since
/// this device last synced it, are there conflict copies, is quick unlock on.
public struct VaultStatus: Sendable, Encodable {
    /// The version of the JSON document's layout.
    public let schema = 1
    /// The vault.
    public let vault: String
    /// Whether this device has a base for it.
    public let baseKnown: Bool
    /// Whether the file differs from the base (nil: no base).
    public let changedSinceLastSync: Bool?
    /// The conflict copies beside it.
    public let conflictCopies: [ConflictCopies.Copy]
    /// Until when `unlock` keeps the vault's key (nil: not unlocked).
    public let quickUnlockUntil: Date?

    /// The status of the vault at `path` with this device's `state` (copies named by `naming`).
    public init(of path: String, state: SyncStateStore, naming: ConflictCopies.Naming, quickUnlock: QuickUnlock = QuickUnlock()) throws {
        guard let current = try DurableFile.fingerprint(atPath: path, on: state.fileSystem) else { throw FileError.notFound(path: path) }
        let record = state.base(for: path)?.record
        vault = path
        baseKnown = record != nil
        changedSinceLastSync = record.map { !$0.fingerprint.sameContent(as: current) }
        conflictCopies = ConflictCopies.find(for: path, on: state.fileSystem, naming: naming)
        quickUnlockUntil = quickUnlock.expiry(path: path)
    }
}

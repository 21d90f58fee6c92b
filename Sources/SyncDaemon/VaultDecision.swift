internal import Foundation
internal import SyncWatch
internal import SyncCommit
internal import SyncState
internal import SyncFiles
internal import KDBXFormat

/// A decision on a vault that changed on disk under the `ask` policy, carried out the way the
/// watcher and `resolve` carry theirs: `reload` and `merge` are one check of the watcher under that
/// policy (its reconciler and the one commit pipeline); `overwrite` writes this device's version
/// (the remembered base) over the disk's through the session's compare-and-swap, the disk's kept as
/// a backup.
enum VaultDecision {
    /// Why a decision was not carried out.
    enum Failure: Error, CustomStringConvertible {
        case noBase(String)
        var description: String {
            switch self {
            case .noBase(let path): "\(path): this device has no version of its own to overwrite with (no remembered base)"
            }
        }
    }

    /// Carries out `decision` on `vault`; its events go to `emit`. What was done, in one line.
    static func apply(
        _ decision: SyncSession.Decision, to vault: DaemonVault, credentials: VaultCredentials, limits: ResourceLimits, state: SyncStateStore,
        device: DeviceSettings, emit: @escaping @Sendable (WatchEvent) -> Void
    ) throws -> String {
        switch decision {
        case .reload, .merge:
            var settings = vault.engineSettings
            settings.policy = decision == .reload ? .reload : .merge
            settings.device = device
            WatchEngine(vaults: [vault.path], credentials: credentials, limits: limits, state: state, settings: settings, source: nil) { event in
                if event.kind != .stopped { emit(event) }
            }.runOnce()
            return decision == .reload ? "the version on disk was taken as it is" : "the version on disk was merged with this device's"
        case .overwrite:
            let path = DurableFile.canonicalPath(vault.path, on: state.fileSystem)
            guard let base = state.base(for: path) else { throw Failure.noBase(path) }
            let opened = try KDBXReader.open(base.bytes, key: credentials.key, cachedKey: nil, limits: limits)
            let session = try SyncSession(path: path, working: opened, key: credentials.key, state: state, limits: limits,
                                          basedOn: base.record.fingerprint, settings: device)
            let resolution = try session.resolveDiskChange(by: .overwrite)
            guard resolution.wroteFile else { return "nothing to write: the vault already held this device's version" }
            return "this device's version was written over the disk's" + (resolution.backup.map { " (the disk's kept as \($0))" } ?? "")
        }
    }
}

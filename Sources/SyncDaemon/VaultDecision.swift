internal import Foundation
internal import Synchronization
internal import SyncWatch
internal import SyncCommit
internal import SyncState
internal import SyncFiles
internal import KDBXFormat

/// A decision on a vault that waits for one, carried out the way the watcher and `resolve` carry
/// theirs: a change on disk under the `ask` policy, or a version the watcher refused (a rollback,
/// another database). `reload` and `merge` are one check of the watcher under that policy (its
/// reconciler and the one commit pipeline; after a refusal it takes the refused version: as it is,
/// this device's versions set aside, or with them merged back); `overwrite` writes this device's
/// version (the remembered base) over the disk's through the session's compare-and-swap, the disk's
/// kept as a backup.
enum VaultDecision {
    /// Why a decision was not carried out.
    enum Failure: Error, CustomStringConvertible {
        case noBase(String)
        /// The check the decision ran ended in `event` (refused again, an error, a changed key).
        case checkEnded(WatchEvent)
        var description: String {
            switch self {
            case .noBase(let path): "\(path): this device has no version of its own to overwrite with (no remembered base)"
            case .checkEnded(let event): event.detail
            }
        }
    }

    /// Carries out `decision` on `vault` (`afterRefusal`: the version on disk was refused, not just
    /// changed); its events go to `emit`. What was done, in one line.
    static func apply(
        _ decision: SyncSession.Decision, to vault: DaemonVault, afterRefusal: Bool, credentials: VaultCredentials, limits: ResourceLimits,
        state: SyncStateStore, device: DeviceSettings, emit: @escaping @Sendable (WatchEvent) -> Void
    ) throws -> String {
        switch decision {
        case .reload, .merge:
            var settings = vault.engineSettings
            settings.policy = decision == .reload ? .reload : .merge
            settings.device = device
            settings.takesRefusedVersion = afterRefusal
            let ending = Mutex<WatchEvent?>(nil)
            WatchEngine(vaults: [vault.path], credentials: credentials, limits: limits, state: state, settings: settings, source: nil) { event in
                guard event.kind != .stopped else { return }
                if event.kind.isProblem || [.refused, .keyChanged, .decisionNeeded].contains(event.kind) {
                    ending.withLock { $0 = event }
                }
                emit(event)
            }.runOnce()
            if let ended = ending.withLock({ $0 }) { throw Failure.checkEnded(ended) }
            switch (decision, afterRefusal) {
            case (.reload, false): return "the version on disk was taken as it is"
            case (.reload, true): return "the refused version on disk was taken as it is; this device's versions it lacked are kept aside (conflicts --merged)"
            case (_, false): return "the version on disk was merged with this device's"
            case (_, true): return "this device's newer versions were merged back into the version on disk"
            }
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

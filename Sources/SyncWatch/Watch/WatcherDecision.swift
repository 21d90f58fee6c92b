public import Foundation
internal import Synchronization
public import SyncFiles
public import SyncState
public import SyncCommit
public import KDBXFormat
public import MyPassCore
internal import MyPassCrypto

/// A person's decision on a vault the watcher waits about: a change on disk under the `ask` policy,
/// or a version it refused (a rollback to an older version, another database in the vault's place).
/// `reload` and `merge` are one check of the watcher under that policy, allowed to take a refused
/// version (`Reconciler.Policy.takesRefusedVersion`: taken as it is with this device's versions it
/// lacks set aside, or a rollback with them merged back; two databases are never merged); `overwrite`
/// writes this device's version (the remembered base) over the disk's through the session's
/// compare-and-swap, the disk's kept as a backup. `daemon decide` and `resolve` without a working
/// copy both carry theirs out here.
public enum WatcherDecision {
    /// Why a decision was not carried out.
    public enum Failure: Error, CustomStringConvertible, ClassifiedFailure {
        /// This device has no version of its own for the vault (never synced it here).
        case noBase(String)
        /// The check the decision ran ended in `event` (refused again, an error, a changed key, a
        /// wait for a transfer or a missing vault).
        case checkEnded(WatchEvent)
        /// The version on disk is no longer the one decided on: decide again.
        case changedSince(String)

        public var description: String {
            switch self {
            case .noBase(let path): "\(path): this device has no version of its own to overwrite with (no remembered base)"
            case .checkEnded(let event): "\(event.vault): \(event.detail)"
            case .changedSince(let path): "\(path): the vault changed since the decision was asked for; nothing done, decide again"
            }
        }

        public var failureKind: FailureKind {
            switch self {
            case .noBase: .invalidRequest
            case .changedSince: .refusedForSafety
            case .checkEnded(let event):
                switch event.kind {
                case .keyChanged: .wrongCredentials
                case .unreadable: .unreadableVault
                case .refused, .decisionNeeded: .refusedForSafety
                default: .ioError
                }
            }
        }
    }

    /// What a decision did.
    public struct Outcome: Sendable {
        /// What was done, in one line.
        public let summary: String
        /// What the vault's content changed by (taken in, merged back).
        public let changes: [Change]
        /// Where the disk's version was kept (overwrite), if it was.
        public let backup: String?
        /// Whether the vault file was written.
        public let wroteFile: Bool
    }

    /// Carries out `decision` on the vault at `path` with the watcher's `settings` (its graces and
    /// device rules); the check's events go to `emit`. `version`: the SHA-256 of the version on disk
    /// the person decided about (from the `refused` or `decisionNeeded` event): a version on disk that
    /// is another one by now is neither taken, merged nor overwritten, whatever the decision; the
    /// person is asked about it (`changedSince`; nil: whichever is on disk).
    public static func apply(
        _ decision: SyncSession.Decision, toVaultAt path: String, about version: String? = nil, credentials: VaultCredentials,
        limits: ResourceLimits, state: SyncStateStore, settings: WatchEngine.Settings, emit: @escaping @Sendable (WatchEvent) -> Void = { _ in }
    ) throws -> Outcome {
        switch decision {
        case .reload, .merge:
            var settings = settings
            settings.policy = decision == .reload ? .reload : .merge
            settings.takesRefusedVersion = true
            settings.decidedVersion = version
            settings.rollbackHold = 0
            let seen = Mutex<[WatchEvent]>([])
            WatchEngine(vaults: [path], credentials: credentials, limits: limits, state: state, settings: settings, source: nil) { event in
                guard event.kind != .stopped else { return }
                seen.withLock { $0.append(event) }
                emit(event)
            }.runOnce()
            let events = seen.withLock { $0 }
            let ending: Set<WatchEvent.Kind> = [.refused, .keyChanged, .decisionNeeded, .waitingForSync, .vaultMissing, .waitingForRebuild]
            if let ended = events.last(where: { $0.kind.isProblem || ending.contains($0.kind) }) {
                if let version, case .decisionNeeded(_, let onDisk) = ended, onDisk != version { throw Failure.changedSince(path) }
                throw Failure.checkEnded(ended)
            }
            let restored = events.contains { $0.kind == .restored }
            let tookIn = events.contains { [.reloaded, .baseRecorded, .rebuiltFromCopy].contains($0.kind) }
            let summary = switch (decision, restored, tookIn) {
            case (_, false, false): "nothing waited for a decision: the vault is the version this device synced"
            case (.reload, _, _): "the version on disk was taken as it is"
            case (_, true, _): "this device's newer versions were merged back into the version on disk"
            case (_, false, true): "the version on disk was merged with this device's"
            }
            return Outcome(summary: summary, changes: events.flatMap(\.changes), backup: nil,
                           wroteFile: events.contains { [.restored, .conflictCopyMerged, .rebuiltFromCopy].contains($0.kind) })
        case .overwrite:
            let path = DurableFile.canonicalPath(path, on: state.fileSystem)
            guard let base = state.base(for: path) else { throw Failure.noBase(path) }
            if let version, (try? SHA256.hexHash(FileReading.readAll(atPath: path, on: state.fileSystem))) != version {
                throw Failure.changedSince(path)
            }
            let opened = try KDBXReader.open(base.bytes, key: credentials.key, cachedKey: nil, limits: limits)
            let session = try SyncSession(path: path, working: opened, key: credentials.key, state: state, limits: limits,
                                          basedOn: base.record.fingerprint, settings: settings.device)
            let resolution = try session.resolveDiskChange(by: .overwrite)
            let summary = resolution.wroteFile ? "this device's version was written over the disk's" + (resolution.backup.map { " (the disk's kept as \($0))" } ?? "")
                : "nothing to write: the vault already held this device's version"
            return Outcome(summary: summary, changes: resolution.changes, backup: resolution.backup, wroteFile: resolution.wroteFile)
        }
    }
}

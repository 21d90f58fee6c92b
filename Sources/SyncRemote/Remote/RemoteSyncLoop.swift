internal import Foundation
public import SyncFiles
internal import SyncState
public import SyncCommit
internal import Synchronization

/// `sync --watch`: syncs once, then again whenever the working copy changes on disk (checked every
/// second) and at least every `interval` seconds (a conditional request: an unchanged remote costs
/// one round trip). A failed round (server unreachable, a refusal) is reported and retried at the
/// next wake-up; nothing stops the loop but `stop()`.
public final class RemoteSyncLoop: Sendable {
    /// What one round produced.
    public enum Outcome: Sendable {
        case synced(RemoteSync.Report)
        case failed(message: String, kind: FailureKind)
    }

    private let stopped = Atomic(false)
    /// Signalled by `stop()` (after `stopped` is set), so that a waiting `run` wakes at once.
    private let wake = DispatchSemaphore(value: 0)
    /// Cancelled by `stop()`: give it to the remote's options (`RemoteOptions.cancellation`) so that a
    /// transfer in progress ends within a second instead of at its time-out.
    public let cancellation: TransferCancellation

    public init(cancellation: TransferCancellation = TransferCancellation()) {
        self.cancellation = cancellation
    }

    /// Ends `run` after the current round, stopping its transfer in progress.
    public func stop() {
        cancellation.cancel()
        stopped.store(true, ordering: .releasing)
        wake.signal()
    }

    /// Runs rounds until `stop()` for the vault at `vaultPath` on `fileSystem`; `round` performs one
    /// sync, `report` receives each outcome.
    public func run(
        vaultPath: String, on fileSystem: FileSystem, interval: Double, round: () throws -> RemoteSync.Report, report: (Outcome) -> Void
    ) {
        var lastSeen = Self.fingerprint(vaultPath, on: fileSystem)
        var due = Date()
        while true {
            while !isStopped && Date() < due && Self.fingerprint(vaultPath, on: fileSystem) == lastSeen {
                let until = min(due, Date().addingTimeInterval(1))
                _ = wake.wait(timeout: .now() + max(0, until.timeIntervalSinceNow))
            }
            if isStopped { return }
            do {
                report(.synced(try round()))
            } catch {
                if cancellation.isCancelled { return }  // stopped mid-round: nothing to report
                report(.failed(message: "\(error)", kind: FailureKind(of: error)))
            }
            lastSeen = Self.fingerprint(vaultPath, on: fileSystem)
            due = Date().addingTimeInterval(interval)
        }
    }

    private var isStopped: Bool { stopped.load(ordering: .acquiring) }

    /// The working copy's inode, size and modification time (a change of any wakes the loop).
    private static func fingerprint(_ path: String, on fileSystem: FileSystem) -> FileStatus? {
        SystemCalls.status(atPath: DurableFile.resolvedPath(path, on: fileSystem), on: fileSystem)
    }
}

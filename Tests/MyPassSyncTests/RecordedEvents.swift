import KDBXFormat
import Synchronization
import SyncState
@testable import SyncWatch

/// The events a watcher or an engine emitted, in order, from whichever thread emitted them.
final class RecordedEvents: Sendable {
    private let list = Mutex<[WatchEvent]>([])
    func add(_ event: WatchEvent) { list.withLock { $0.append(event) } }
    var all: [WatchEvent] { list.withLock { $0 } }
}

extension Workspace {
    /// A watcher of this workspace's vault with the default device settings, its events recorded in `events`.
    func watcher(policy: VaultWatcher.Policy, copyPolicy: VaultWatcher.CopyPolicy, recording events: RecordedEvents) -> VaultWatcher {
        VaultWatcher(path: vaultPath, key: Self.key, state: state, limits: .standard, settings: DeviceSettings(), policy: policy,
                     copyPolicy: copyPolicy) { events.add($0) }
    }
}

internal import Foundation
internal import SyncWatch
internal import SyncCommit
internal import SyncState
internal import SyncFiles
internal import KDBXFormat

/// One configured vault in the running daemon: its credentials (obtained once, on its first start,
/// and kept while it is configured the same), its `WatchEngine` on a thread of its own (so a slow
/// password command, a failing check or a changed key of one vault does not hold up the others),
/// whether it is paused, and its last event.
///
/// `@unchecked Sendable`: every mutable property is guarded by `lock`.
final class WatchedVault: @unchecked Sendable {
    let configuration: DaemonVault
    private let lock = NSLock()
    private let finished = DispatchGroup()
    private var credentials: (key: VaultCredentials, limits: ResourceLimits)?
    private var engine: WatchEngine?
    private var running = false
    private var stopRequested = false
    private var isPaused = false
    private var last: (kind: WatchEvent.Kind, time: Date, detail: String)?
    /// The decision the last event asked for was taken (until the next event).
    private var decided = false

    init(_ configuration: DaemonVault) {
        self.configuration = configuration
    }

    var path: String { configuration.path }

    /// Starts watching on a thread of its own (nothing when it runs already or is paused): the
    /// credentials first if not obtained yet (a failure is an `error` event, and the vault waits for
    /// a resume or a changed configuration), then the engine until `stop`.
    func start(state: SyncStateStore, device: DeviceSettings, onEvent: @escaping @Sendable (WatchEvent) -> Void) {
        let starting: Bool = lock.withLock {
            guard !running && !isPaused else { return false }
            running = true
            stopRequested = false
            return true
        }
        guard starting else { return }
        finished.enter()
        let thread = Thread { [self] in
            defer {
                lock.withLock {
                    running = false
                    self.engine = nil
                }
                finished.leave()
            }
            guard let credentials = obtainCredentials(onEvent: onEvent) else { return }
            var settings = configuration.engineSettings
            settings.device = device
            let engine = WatchEngine(vaults: [path], credentials: credentials.key, limits: credentials.limits, state: state, settings: settings) {
                event in
                guard event.kind != .stopped else { return }  // the daemon says once when it stops
                onEvent(event)
            }
            let go: Bool = lock.withLock {
                guard !stopRequested else { return false }
                self.engine = engine
                return true
            }
            if go { engine.run() }
        }
        thread.name = "mypass-sync vault"
        thread.start()
    }

    private func obtainCredentials(onEvent: @Sendable (WatchEvent) -> Void) -> (key: VaultCredentials, limits: ResourceLimits)? {
        if let kept = lock.withLock({ credentials }) { return kept }
        do {
            let opened = try configuration.credentials.open(standInPath)
            let obtained = (opened.credentials, opened.file.limits)
            lock.withLock { credentials = obtained }
            return obtained
        } catch {
            onEvent(.error(vault: path, message: "the configured credentials do not open the vault: \(error)"))
            return nil
        }
    }

    /// The vault, or while a sync engine has renamed both versions aside, one of those copies.
    private var standInPath: String {
        VaultWatcher.standIn(for: path, naming: (try? DeviceSettings.load())?.copyNaming ?? .standard)
    }

    /// Asks the engine to stop after the check in progress (a write is never cut off).
    func stop() {
        lock.withLock {
            stopRequested = true
            engine?.stop()
        }
    }

    /// Waits until the engine's thread has ended.
    func waitUntilStopped() {
        finished.wait()
    }

    /// The credentials obtained, if any (a decision is carried out with them).
    var keptCredentials: (key: VaultCredentials, limits: ResourceLimits)? { lock.withLock { credentials } }

    var paused: Bool {
        get { lock.withLock { isPaused } }
        set { lock.withLock { isPaused = newValue } }
    }

    /// Notes `event` as the vault's last.
    func note(_ event: WatchEvent, at time: Date) {
        lock.withLock {
            last = (event.kind, time, event.detail)
            decided = false
        }
    }

    /// The decision asked for was taken.
    func noteDecided() {
        lock.withLock { decided = true }
    }

    /// The vault's state and last event.
    var condition: (state: DaemonStatus.State, last: (kind: WatchEvent.Kind, time: Date, detail: String)?) {
        lock.withLock {
            if isPaused { return (.paused, last) }
            guard let last, !(decided && last.kind == .decisionNeeded) else { return (.watching, last) }
            return (DaemonStatus.State(after: last.kind), last)
        }
    }
}

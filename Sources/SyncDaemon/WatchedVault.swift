internal import Foundation
internal import Synchronization
internal import SyncWatch
internal import SyncCommit
internal import SyncState
internal import SyncFiles
internal import KDBXFormat

/// One configured vault in the running daemon: its credentials (obtained once, on its first start,
/// and kept while it is configured the same), its `WatchEngine` on a thread of its own (so a slow
/// password command, a failing check or a changed key of one vault does not hold up the others),
/// whether it is paused, and its last event.
final class WatchedVault: Sendable {
    let configuration: DaemonVault
    private let finished = DispatchGroup()
    /// What changes while the vault runs, read and written from the daemon's threads.
    private struct Shared {
        var credentials: (key: VaultCredentials, limits: ResourceLimits)?
        var engine: WatchEngine?
        var running = false
        var stopRequested = false
        var isPaused = false
        var last: (kind: WatchEvent.Kind, time: Date, detail: String)?
        /// The version on disk the last event asks a decision about (its SHA-256).
        var versionToDecide: String?
        /// The decision the last event asked for was taken (until the next event).
        var decided = false
        /// A decision is being carried out: no other one meanwhile.
        var deciding = false
        /// How many engines were started for the vault.
        var enginesStarted = 0
    }
    private let shared = Mutex(Shared())

    init(_ configuration: DaemonVault) {
        self.configuration = configuration
    }

    var path: String { configuration.path }

    /// Starts watching on a thread of its own (nothing when it runs already or is paused): the
    /// credentials first if not obtained yet (a failure is an `error` event, and the vault waits for
    /// a resume or a changed configuration), then the engine until `stop`.
    func start(state: SyncStateStore, device: DeviceSettings, clock: any WatchClock, onEvent: @escaping @Sendable (WatchEvent) -> Void) {
        let starting: Bool = shared.withLock { shared in
            guard !shared.running && !shared.isPaused else { return false }
            shared.running = true
            shared.stopRequested = false
            return true
        }
        guard starting else { return }
        finished.enter()
        let thread = Thread { [self] in
            defer {
                shared.withLock { shared in
                    shared.running = false
                    shared.engine = nil
                }
                finished.leave()
            }
            guard let credentials = obtainCredentials(state: state, naming: device.copyNaming, onEvent: onEvent) else { return }
            var settings = configuration.engineSettings(device: device, clock: clock)
            if !Reconciler.holdsRollback(after: shared.withLock({ $0.last?.kind })) { settings.rollbackHold = 0 }
            let engine = WatchEngine(vaults: [path], credentials: credentials.key, limits: credentials.limits, state: state, settings: settings) {
                event in
                guard event.kind != .stopped else { return }  // the daemon says once when it stops
                onEvent(event)
            }
            let go: Bool = shared.withLock { shared in
                guard !shared.stopRequested else { return false }
                shared.engine = engine
                shared.enginesStarted += 1
                return true
            }
            if go { engine.run() }
        }
        thread.name = "mypass-sync vault"
        thread.start()
    }

    /// The credentials, obtained once (the vault, or while a sync engine has renamed both versions
    /// aside, one of those copies named as `naming` says, stands for it), checked on a file read
    /// under the rule for a credential check against the base in `state`.
    private func obtainCredentials(state: SyncStateStore, naming: ConflictCopies.Naming, onEvent: @Sendable (WatchEvent) -> Void)
        -> (key: VaultCredentials, limits: ResourceLimits)? {
        if let kept = shared.withLock({ $0.credentials }) { return kept }
        do {
            let standIn = VaultWatcher.standIn(for: path, on: state.fileSystem, naming: naming)
            let limits = ResourceLimits.standard
            let opened = try configuration.credentials.open(path, standIn: standIn, state: state, limits: limits, on: state.fileSystem)
            let obtained = (opened.credentials, limits)
            shared.withLock { $0.credentials = obtained }
            return obtained
        } catch let refusal as CredentialCheckRefusal {
            onEvent(.error(vault: path, message: "the configured credentials were not checked: \(refusal)"))
            return nil
        } catch {
            onEvent(.error(vault: path, message: "the configured credentials do not open the vault: \(error)"))
            return nil
        }
    }

    /// Asks the engine to stop after the check in progress (a write is never cut off).
    func stop() {
        shared.withLock { shared in
            shared.stopRequested = true
            shared.engine?.stop()
        }
    }

    /// Waits until the engine's thread has ended.
    func waitUntilStopped() {
        finished.wait()
    }

    /// The engine watching the vault now (nil: paused, stopped, or its credentials failed).
    var engine: WatchEngine? { shared.withLock { $0.engine } }

    /// How many engines were started for the vault so far (a decision starts none).
    var enginesStarted: Int { shared.withLock { $0.enginesStarted } }

    var paused: Bool {
        get { shared.withLock { $0.isPaused } }
        set { shared.withLock { $0.isPaused = newValue } }
    }

    /// Notes `event` as the vault's last.
    func note(_ event: WatchEvent, at time: Date) {
        shared.withLock { shared in
            shared.last = (event.kind, time, event.detail)
            shared.decided = false
            shared.versionToDecide = Reconciler.versionToDecide(after: event)
        }
    }

    /// Marks a decision as being carried out; false when one is already (a socket request and a
    /// notice's button at once: one of them is carried out).
    func beginDecision() -> Bool {
        shared.withLock { shared in
            guard !shared.deciding else { return false }
            shared.deciding = true
            return true
        }
    }

    /// The decision is carried out (or failed): another may be taken.
    func endDecision() {
        shared.withLock { $0.deciding = false }
    }

    /// The decision asked for was taken.
    func noteDecided() {
        shared.withLock { $0.decided = true }
    }

    /// The version on disk (SHA-256) a decision is awaited about now; nil when none is (or paused).
    var awaitedDecision: String? {
        shared.withLock { shared in
            guard !shared.isPaused, !shared.decided, let last = shared.last, Reconciler.waitsForDecision(after: last.kind) else { return nil }
            return shared.versionToDecide
        }
    }

    /// The vault's state and last event.
    var condition: (state: DaemonStatus.State, last: (kind: WatchEvent.Kind, time: Date, detail: String)?) {
        shared.withLock { shared in
            if shared.isPaused { return (.paused, shared.last) }
            guard let last = shared.last, !(shared.decided && Reconciler.waitsForDecision(after: last.kind)) else { return (.watching, shared.last) }
            return (DaemonStatus.State(after: last.kind), last)
        }
    }
}

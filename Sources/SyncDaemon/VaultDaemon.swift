internal import Foundation
internal import Synchronization
public import SyncWatch
public import SyncCommit
public import SyncState
internal import SyncFiles

/// One process for every configured vault: a `WatchEngine` per vault (all on the process's one
/// inotify instance, `DirectoryEvents`), each with its own credentials, failures and pause; the
/// configuration read again on `reload` (vaults added, removed or changed start or stop, the others
/// go on untouched); desktop notices planned by `NoticePlanner` and sent by a `DesktopNotifier`.
///
public final class VaultDaemon: Sendable {
    /// Why a control request was not carried out (the answer's error).
    public enum ControlFailure: Error, Equatable, CustomStringConvertible, Sendable {
        case notConfigured(String)
        case noDecisionPending(String)
        case decisionFailed(String)

        public var description: String {
            switch self {
            case .notConfigured(let path): "\(path) is not a configured vault (`mypass-sync daemon list`)"
            case .noDecisionPending(let path): "\(path) waits for no decision"
            case .decisionFailed(let message): message
            }
        }
    }

    /// What a reload changed.
    public struct ReloadOutcome: Sendable, Codable, Equatable {
        public var added: [String] = []
        public var removed: [String] = []
        public var changed: [String] = []
        /// The configuration's unusable lines (`line N: …`).
        public var problems: [String] = []
    }

    private let configurationPath: String
    private let state: SyncStateStore
    private let device: DeviceSettings
    private let notifier: DesktopNotifier?
    private let log: @Sendable (String) -> Void
    private let onEvent: @Sendable (WatchEvent) -> Void
    /// The running vaults (what a control request looks up).
    private struct Shared {
        var vaults: [WatchedVault] = []
    }
    private let shared = Mutex(Shared())
    /// The notices being coalesced, and when the next flush of them is due: a lock of their own, so
    /// planning the notice of a large merge never holds up a control request.
    private struct Notices {
        var planner = NoticePlanner()
    }
    private let notices = Mutex(Notices())
    private let stopped = DispatchSemaphore(value: 0)
    /// The time the daemon notes events at and sends collected notices by (a test moves its own).
    private let clock: any WatchClock
    /// Wakes the thread that sends collected notices when they are due (`NoticeFlusher`).
    private let flusher: NoticeFlusher

    /// A daemon for the vaults configured in `configurationPath`, their sync state in `state`;
    /// events go to `onEvent` (from each vault's thread), log lines to `log`, notices to `notifier`.
    public init(
        configurationPath: String = DaemonConfiguration.defaultPath, state: SyncStateStore, device: DeviceSettings, notifier: DesktopNotifier?,
        clock: any WatchClock = SystemClock(), log: @escaping @Sendable (String) -> Void, onEvent: @escaping @Sendable (WatchEvent) -> Void
    ) {
        self.configurationPath = configurationPath
        self.state = state
        self.device = device
        self.notifier = notifier
        self.clock = clock
        self.flusher = NoticeFlusher(clock: clock)
        self.log = log
        self.onEvent = onEvent
    }

    /// Reads the configuration (again) and brings the running vaults in line with it: new ones
    /// start, removed ones stop, changed ones restart with their new settings (and credentials);
    /// the others are not touched. An unreadable file changes nothing.
    @discardableResult
    public func reload() -> ReloadOutcome {
        var outcome = ReloadOutcome()
        let configuration: DaemonConfiguration
        do {
            configuration = try DaemonConfiguration.load(from: configurationPath)
        } catch {
            outcome.problems = ["the configuration cannot be read: \(error)"]
            log("daemon: \(outcome.problems[0]); the running vaults are kept")
            return outcome
        }
        outcome.problems = configuration.problems.map { "\(configurationPath): \($0)" }
        for problem in outcome.problems { log("daemon: \(problem) (skipped)") }
        let (toStop, toStart): ([WatchedVault], [WatchedVault]) = shared.withLock { shared in
            var stop: [WatchedVault] = []
            var start: [WatchedVault] = []
            var kept: [WatchedVault] = []
            for wanted in configuration.vaults {
                if let current = shared.vaults.first(where: { $0.path == wanted.path }) {
                    if current.configuration == wanted {
                        kept.append(current)
                        continue
                    }
                    stop.append(current)
                    outcome.changed.append(wanted.path)
                } else {
                    outcome.added.append(wanted.path)
                }
                let vault = WatchedVault(wanted)
                // A pause is a person's decision: it outlives the daemon until `resume`.
                vault.paused = VaultPause(state: state, vaultPath: DurableFile.canonicalPath(wanted.path, on: state.fileSystem)).isPaused
                start.append(vault)
                kept.append(vault)
            }
            for current in shared.vaults where !configuration.vaults.contains(where: { $0.path == current.path }) {
                stop.append(current)
                outcome.removed.append(current.path)
            }
            shared.vaults = kept
            return (stop, start)
        }
        for vault in toStop { vault.stop() }
        for vault in toStop {
            vault.waitUntilStopped()
            if let notice = notices.withLock({ notices in notices.planner.flush(DurableFile.canonicalPath(vault.path, on: state.fileSystem)) }), vault.configuration.notices { notifier?.send(notice) }
        }
        for vault in toStart { start(vault) }
        return outcome
    }

    private func start(_ vault: WatchedVault) {
        vault.start(state: state, device: device, clock: clock) { [weak self, weak vault] event in
            guard let self, let vault else { return }
            self.handle(event, of: vault)
        }
    }

    private func handle(_ event: WatchEvent, of vault: WatchedVault) {
        let now = clock.now
        vault.note(event, at: now)
        onEvent(event)
        guard vault.configuration.notices, let notifier else { return }
        let (notice, next): (DesktopNotice?, Date?) = notices.withLock { notices in (notices.planner.take(event, at: now), notices.planner.nextDue) }
        if let notice { notifier.send(notice) }
        if let next { scheduleFlush(at: next) }
    }

    /// Sends the collected notices when they are due, on the flusher's thread (one wake-up at a time;
    /// none while nothing is collected).
    private func scheduleFlush(at time: Date) {
        flusher.schedule(at: time) { [weak self] in
            guard let self else { return }
            let (due, next): ([DesktopNotice], Date?) = self.notices.withLock { notices in
                (notices.planner.due(at: self.clock.now), notices.planner.nextDue)
            }
            for notice in due { self.notifier?.send(notice) }
            if let next { self.scheduleFlush(at: next) }
        }
    }

    /// The running vault `path` names, under any spelling of its real file.
    func vault(_ path: String) throws(ControlFailure) -> WatchedVault {
        let canonical = DurableFile.canonicalPath(path, on: state.fileSystem)
        let running = shared.withLock { shared in shared.vaults }
        guard let found = running.first(where: { $0.path == path || $0.path == canonical })
            ?? running.first(where: { DurableFile.canonicalPath($0.path, on: state.fileSystem) == canonical }) else { throw .notConfigured(path) }
        return found
    }

    /// Pauses `path`: its engine stops after the check in progress; nothing is read or written
    /// until `resume` (which checks it at once, so what happened meanwhile is seen then). The pause is
    /// kept in the sync state (`VaultPause`): a restarted daemon keeps the vault paused.
    public func pause(_ path: String) throws(ControlFailure) {
        let vault = try vault(path)
        do {
            try VaultPause(state: state, vaultPath: DurableFile.canonicalPath(vault.path, on: state.fileSystem)).pause()
        } catch {
            throw .decisionFailed("\(path): the pause could not be kept in the sync state: \(error)")
        }
        vault.paused = true
        vault.stop()
        vault.waitUntilStopped()
    }

    /// Resumes `path` (a vault whose credentials failed tries them again).
    public func resume(_ path: String) throws(ControlFailure) {
        let vault = try vault(path)
        do {
            try VaultPause(state: state, vaultPath: DurableFile.canonicalPath(vault.path, on: state.fileSystem)).resume()
        } catch {
            throw .decisionFailed("\(path): the pause could not be ended in the sync state: \(error)")
        }
        vault.paused = false
        start(vault)
    }

    /// Approves the shared group's reference a notice offered (`request`: that reference only, by its
    /// approval digest; one put in its place since stays unapproved), then checks the vault soon so
    /// the share starts working. What was done, in one line.
    public func approveShare(_ path: String, _ request: ShareApprovalRequest) throws(ControlFailure) -> String {
        let vault = try vault(path)
        let canonical = DurableFile.canonicalPath(vault.path, on: state.fileSystem)
        let approved: Bool
        do {
            approved = try ShareSync(vaultPath: canonical, state: state).approve(request.group, digest: request.reference)
        } catch {
            throw .decisionFailed("\(path): the approval could not be kept in the sync state: \(error)")
        }
        guard approved else {
            throw .decisionFailed("\(path): shared group \(request.groupPath): its reference changed since the notice; nothing approved")
        }
        vault.engine?.checkSoon(canonical)
        return "approved shared group \(request.groupPath) on this device"
    }

    /// Carries out `decision` on `path`, which must wait for one (a change under the `ask` policy, or
    /// a version refused), about the version it waits about: queued to the vault's running engine and
    /// taken by its loop at its next turn (`WatchEngine.decide`), waited for at most `decisionWait`.
    /// What was done, in one line.
    public func decide(_ path: String, _ decision: SyncSession.Decision) throws(ControlFailure) -> String {
        let vault = try vault(path)
        guard vault.beginDecision() else { throw .decisionFailed("\(path): a decision is being carried out already") }
        defer { vault.endDecision() }
        guard let version = vault.awaitedDecision else { throw .noDecisionPending(path) }
        guard let engine = vault.engine else { throw .decisionFailed("\(path): its watch is not running; nothing done") }
        switch engine.decide(decision, about: version, timeout: Self.decisionWait) {
        case .success(let outcome):
            vault.noteDecided()
            return outcome.summary
        case .failure(let failure):
            throw .decisionFailed("\(path): \(decision.rawValue) failed: \(failure)")
        }
    }

    /// The longest a decision waits for its vault's engine to take it (a check in progress ends first).
    static let decisionWait: TimeInterval = 60

    /// Every configured vault's state, last event, conflict copies waiting and last merge.
    public func status() -> DaemonStatus {
        let current = shared.withLock { shared in shared.vaults }
        return DaemonStatus(vaults: current.map { vault in
            let path = DurableFile.canonicalPath(vault.path, on: state.fileSystem)
            let condition = vault.condition
            let lastMerge = MergeJournal(state: state, vaultPath: path).records().max { $0.time < $1.time }
            let detail = condition.state == .error || condition.state == .needsDecision ? condition.last?.detail : nil
            return DaemonStatus.Vault(
                path: vault.path, state: condition.state,
                lastEvent: condition.last.map { DaemonStatus.LastEvent(kind: $0.kind.rawValue, time: $0.time) },
                conflictCopies: ConflictCopies.find(for: path, on: state.fileSystem, naming: device.copyNaming).count,
                lastMerge: lastMerge.map { DaemonStatus.LastMerge(journal: $0.id, time: $0.time) },
                credentials: vault.configuration.credentials.kind, detail: detail, shares: Self.shares(of: path, state: state))
        })
    }

    /// The shared groups of the vault at `path` as its last share pass found them, with their times.
    private static func shares(of path: String, state: SyncStateStore) -> [DaemonStatus.Share] {
        let exchanges = ShareExchanges(state: state, vaultPath: path)
        return exchanges.summaries().map { summary in
            let record = exchanges.record(for: summary.group)
            return DaemonStatus.Share(group: summary.path, type: summary.type, container: summary.container, approved: summary.approved,
                                      problem: summary.problem, lastImport: record.lastImport, lastExport: record.lastExport)
        }
    }

    /// Stops every vault (each after the check in progress: a write is finished, never cut off) and
    /// sends the notices still collected.
    public func stop() {
        flusher.close()
        let current = shared.withLock { shared in shared.vaults }
        for vault in current { vault.stop() }
        for vault in current { vault.waitUntilStopped() }
        let pending: [DesktopNotice] = notices.withLock { notices in
            current.compactMap { notices.planner.flush(DurableFile.canonicalPath($0.path, on: state.fileSystem)) }
        }
        for notice in pending { notifier?.send(notice) }
        notifier?.drain()
        stopped.signal()
    }

    /// Waits until `stop` has finished.
    public func waitUntilStopped() {
        stopped.wait()
    }
}

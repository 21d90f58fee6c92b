public import Foundation
internal import Synchronization
public import SyncFiles
public import SyncState
public import SyncCommit
public import KDBXFormat

/// What the engine needs of a vault's watcher (`VaultWatcher`; a test hands in its own).
package protocol VaultChecking: AnyObject {
    var path: String { get }
    /// The file system the vault is on.
    var fileSystem: FileSystem { get }
    /// One pass; false when it should be retried later (see `VaultWatcher.check`).
    func check() -> Bool
    /// One pass carrying out a person's decision, and its answer (see `VaultWatcher.check(deciding:)`).
    func check(deciding decision: Reconciler.Decision) -> (succeeded: Bool, answer: WatcherDecision.Answer)
    /// The last check failed (an error, an unreadable file), as opposed to waiting.
    var failedLastCheck: Bool { get }
    /// A sync engine's transfer into the folder is awaited.
    var waitingForTransfer: Bool { get }
    /// A conflict copy of the vault appeared at `path` (called on the event thread: must not block).
    func prepare(copyAt path: String)
    /// The last check's listing held conflict copies that were neither refused and told (left until
    /// they change) nor reported: the engine looks again after `copyRecheck`, whatever the events.
    var copiesOutstanding: Bool { get }
    /// A check that waits: not to be tried again before this time (copies put off until the vault's
    /// allowance for opening them has room); nil: after the engine's usual wait.
    var retryNotBefore: Date? { get }
    /// The containers of the vault's shared groups (their folders are watched too; a change of one,
    /// or a conflict copy of one, brings a check of the vault).
    var containerPaths: [String] { get }
}

extension VaultChecking {
    func prepare(copyAt path: String) {}
    var copiesOutstanding: Bool { false }
    var retryNotBefore: Date? { nil }
    var containerPaths: [String] { [] }
}

extension VaultWatcher: VaultChecking {}

/// Keeps vaults in step with their files for as long as it runs: the watch loop of `watch` and of an
/// app. File events (`FileEventSource`) mark a vault; after a quiet time (the debounce: a sync
/// engine writes in bursts), or at the latest `longestDebounce` after the first event of a stream
/// that never quiets down, its `VaultWatcher` checks it. A check that waits (a transfer, a copy
/// left to its device) is retried after `retryWait`; one that fails backs off, doubling up to
/// `maximumBackoff`. Lost events and folders that come back rescan; without file events the
/// folders are polled. Nothing sleeps: the loop waits on a condition until the next due time or the
/// next event.
///
/// Events reach `onEvent` on the engine's thread, in order, each before the next check starts (an
/// app can act on `reloaded` before anything else happens). For Swift concurrency, hand in the
/// continuation of an `AsyncStream` (`AsyncStream.makeStream(of: WatchEvent.self)`).
///
/// A person's decision on a vault (`decide`, `submit`) is queued and taken by the loop at its next
/// turn: one check of that vault with the decision handed to its plan, answered from how it ended.
// @unchecked: the schedule (`due`, `streamStart`, `notices`, `decisions`, `pollInterval`, `stopping`) is touched only while
// `condition` (an NSCondition: the loop sleeps on it until the next due time or event) is locked;
// the checkers belong to the engine's thread.
public final class WatchEngine: @unchecked Sendable {
    /// How the engine behaves.
    public struct Settings: Sendable {
        /// On an external change: take it in, putting back what a blind save dropped (`merge`), take
        /// it as it is (`reload`), or report a decision (`ask`).
        public var policy: VaultWatcher.Policy = .merge
        /// Sync-conflict copies: fold in, report, ignore.
        public var copyPolicy: VaultWatcher.CopyPolicy = .merge
        /// Quiet time after the last event before a vault is read.
        public var debounce: TimeInterval = 0.3
        /// The longest a vault waits for that quiet time after the first event of a stream: a file
        /// rewritten more often than the debounce (another program saving in a loop, a sync engine
        /// that never pauses) is still read this long after the stream began — or four times the
        /// debounce after it, when that is longer (the debounce stays a quiet time, not a delay).
        public var longestDebounce: TimeInterval = 5
        /// How long a conflict copy made on another device is left to that device. Measured with
        /// real Syncthing (docs/engines/syncthing.md): no clear gain from a grace, and a delay whenever that device runs
        /// no watcher, so by default copies are merged at once.
        public var copyGrace: TimeInterval = 0
        /// How long a version that looks like a rollback waits for the conflict copy holding this
        /// device's newer version (the other device makes it and ships it after its own delay).
        public var rollbackHold: TimeInterval = 20
        /// When a sync engine renamed both versions aside on another device (rclone bisync) and only
        /// copies arrived here: how long that device is left to rebuild the vault (it has this
        /// device's own version renamed aside; two devices rebuilding at once would conflict again).
        public var rebuildGrace: TimeInterval = 3600
        /// Also check every vault this often (NFS, SMB, sshfs, FUSE); nil: on events only.
        public var pollInterval: TimeInterval?
        /// The polling interval when file events cannot be used.
        public var pollWhenUnavailable: TimeInterval = 2
        /// When a check that is waiting (not failing) is tried again.
        public var retryWait: TimeInterval = 1
        /// The longest wait between two checks of a vault whose check keeps failing.
        public var maximumBackoff: TimeInterval = 60
        /// While a check leaves conflict copies in the folder that it neither folded nor told about,
        /// the vault is checked again this long after, event or not: a copy is never left silently
        /// because a file event was missed or a fold was put off.
        public var copyRecheck: TimeInterval = 10
        /// How long each vault may spend on versions from elsewhere that fail to open, within
        /// `foreignOpeningWindow` (`ForeignWorkAllowance`): planted copies, however many or however
        /// often rewritten, cost no more.
        public var foreignOpeningTime: TimeInterval = 10
        /// The window `foreignOpeningTime` is counted in.
        public var foreignOpeningWindow: TimeInterval = 600
        /// This device's settings, which the watchers' saves follow (backups, KDF salt rotation).
        public var device: DeviceSettings
        /// The time the loop and the watchers read and sleep on (a test sets its own).
        public var clock: any WatchClock = SystemClock()

        /// The defaults, as `watch` uses them, with this device's settings.
        public init(device: DeviceSettings) { self.device = device }
    }

    private let checkers: [any VaultChecking]
    private let settings: Settings
    private let source: (any FileEventSource)?
    private let onEvent: @Sendable (WatchEvent) -> Void
    private let condition = NSCondition()
    /// When each marked vault is due for a check.
    private var due: [String: Date] = [:]
    /// When the stream of events each marked vault is waiting out began (`longestDebounce`).
    private var streamStart: [String: Date] = [:]
    /// Events noticed on the source's thread, emitted by the engine's.
    private var notices: [WatchEvent] = []
    /// Decisions submitted and not yet taken, oldest first.
    private var decisions = DecisionQueue()
    /// Each vault's share containers as its last check found them (read by the event thread).
    private var containers: [String: [String]] = [:]
    private var pollInterval: TimeInterval?
    private var stopping = false
    private var announcedPolling = false
    /// The time the loop reads and sleeps on.
    private var clock: any WatchClock { settings.clock }

    /// An engine for `vaults` (paths), opened with `credentials` within `limits` (a `VaultFile`'s),
    /// its sync state in `state`; file events from `source` (default: this platform's).
    public convenience init(
        vaults: [String], credentials: VaultCredentials, limits: ResourceLimits, state: SyncStateStore, settings: Settings,
        source: (any FileEventSource)? = platformFileEventSource(), onEvent: @escaping @Sendable (WatchEvent) -> Void
    ) {
        self.init(settings: settings, source: source, onEvent: onEvent) { emit in
            vaults.map { path in
                VaultWatcher(
                    context: VaultContext(path: DurableFile.canonicalPath(path, on: state.fileSystem), key: credentials.key, limits: limits, state: state,
                                          settings: settings.device),
                    policy: Reconciler.Policy(vault: settings.policy, copies: settings.copyPolicy, foreignCopyGrace: settings.copyGrace,
                                              rollbackHold: settings.rollbackHold, rebuildGrace: settings.rebuildGrace),
                    clock: settings.clock, allowance: ForeignWorkAllowance(seconds: settings.foreignOpeningTime, per: settings.foreignOpeningWindow),
                    emit: emit)
            }
        }
    }

    /// An engine over the checkers `make` builds (they report through the emit function it is given).
    init(
        settings: Settings, source: (any FileEventSource)?, onEvent: @escaping @Sendable (WatchEvent) -> Void,
        checkers make: (@escaping @Sendable (WatchEvent) -> Void) -> [any VaultChecking]
    ) {
        self.settings = settings
        self.source = source
        self.onEvent = onEvent
        self.pollInterval = settings.pollInterval
        self.checkers = make(onEvent)
    }

    /// The vaults watched (resolved paths).
    public var vaults: [String] { checkers.map(\.path) }

    /// Handles what is pending now, copies from other devices included, and the decisions
    /// submitted, then returns; a sync engine's transfer into a folder is awaited up to
    /// `transferWait` seconds (a decision not taken by then is answered so).
    public func runOnce(transferWait: TimeInterval = 30) {
        for checker in checkers {
            let deadline = clock.now.addingTimeInterval(transferWait)
            while !checkTakingDecision(checker) && checker.waitingForTransfer && clock.now < deadline && !isStopping {
                condition.lock()
                clock.wait(on: condition, until: min(deadline, clock.now.addingTimeInterval(0.2)))
                condition.unlock()
            }
            answerUntaken(for: checker.path, "a sync engine's transfer into the vault's folder did not end within \(Int(transferWait)) s")
        }
    }

    /// Carries out `decision` about `version` (its SHA-256; nil: whichever is on disk) on the vault
    /// (the engine's only one when nil) in one check, as `runOnce` does, and returns its answer.
    public func decideOnce(_ decision: SyncSession.Decision, about version: String?, vault: String? = nil,
                           transferWait: TimeInterval = 30) -> WatcherDecision.Answer {
        let answer = Mutex<WatcherDecision.Answer?>(nil)
        submit(decision, about: version, vault: vault) { given in answer.withLock { $0 = given } }
        runOnce(transferWait: transferWait)
        return answer.withLock { $0 } ?? .failure(.notTaken(vault ?? vaults.first ?? "", reason: "the engine watches no such vault"))
    }

    /// Queues `decision` about `version` (its SHA-256; nil: whichever is on disk) for the vault (the
    /// engine's only one when nil) and wakes the loop, which takes it at its next turn; `answer` is
    /// called once with what it did. Returns an id for `withdraw`.
    @discardableResult
    public func submit(_ decision: SyncSession.Decision, about version: String?, vault: String? = nil,
                       answer: @escaping @Sendable (WatcherDecision.Answer) -> Void) -> Int? {
        let canonical = vault.map { path in checkers.first { $0.path == path || $0.path == DurableFile.canonicalPath(path, on: $0.fileSystem) }?.path }
            ?? (checkers.count == 1 ? checkers.first?.path : nil)
        guard let target = canonical else {
            answer(.failure(.notTaken(vault ?? "", reason: "the engine watches no such vault")))
            return nil
        }
        condition.lock()
        defer { condition.unlock() }
        guard !stopping else {
            answer(.failure(.notTaken(target, reason: "the watch is stopping")))
            return nil
        }
        let id = decisions.add(Reconciler.Decision(decision, about: version), vault: target, answer: answer)
        condition.broadcast()
        return id
    }

    /// Takes a submitted decision off the queue if the loop has not taken it yet; whether it had not.
    public func withdraw(_ id: Int) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        return decisions.withdraw(id)
    }

    /// `submit`, waiting (real time, at most `timeout`) for the answer; a decision not taken by then
    /// is withdrawn, one being carried out is waited for (a write is never cut off).
    public func decide(_ decision: SyncSession.Decision, about version: String?, vault: String? = nil,
                       timeout: TimeInterval = 60) -> WatcherDecision.Answer {
        let answer = Mutex<WatcherDecision.Answer?>(nil)
        let answered = DispatchSemaphore(value: 0)
        let id = submit(decision, about: version, vault: vault) { given in
            answer.withLock { $0 = given }
            answered.signal()
        }
        if answered.wait(timeout: .now() + timeout) == .timedOut {
            if let id, withdraw(id) {
                return .failure(.notTaken(vault ?? vaults.first ?? "", reason: "the watch did not take it within \(Int(timeout)) s"))
            }
            answered.wait()
        }
        return answer.withLock { $0! }
    }

    /// One check of `checker`, carrying out the oldest decision submitted for it if there is one
    /// (put back while a sync engine transfers into the folder: it is taken again at the retry).
    private func checkTakingDecision(_ checker: any VaultChecking) -> Bool {
        condition.lock()
        let queued = decisions.take(for: checker.path)
        condition.unlock()
        guard let queued else { return checker.check() }
        let (succeeded, answer) = checker.check(deciding: queued.decision)
        if checker.waitingForTransfer {
            condition.lock()
            decisions.putBack(queued)
            condition.unlock()
        } else {
            queued.answer(answer)
        }
        return succeeded
    }

    /// Answers the decisions still queued (about `path`, or all) as not taken, for `reason`.
    private func answerUntaken(for path: String? = nil, _ reason: String) {
        condition.lock()
        let left = decisions.takeAll(for: path)
        condition.unlock()
        for queued in left { queued.answer(.failure(.notTaken(queued.vault, reason: reason))) }
    }

    /// Watches until `stop()`: checks every vault once at the start, then on events, polls and retries.
    public func run() {
        var tokens: [Int] = []
        var watchedDirectories: Set<String> = []
        if let source {
            for checker in checkers {
                let directory = PathText.folder(of: checker.path)
                guard !watchedDirectories.contains(directory) else { continue }
                watchedDirectories.insert(directory)
                tokens.append(source.watch(directory, on: checker.fileSystem) { [weak self] event in self?.handle(event, watching: directory) })
            }
        } else {
            handle(.unavailable(reason: "no file events on this platform; polling only"), watching: nil)
        }
        defer { for token in tokens { source?.stopWatching(token) } }
        condition.lock()
        let start = clock.now
        for checker in checkers { due[checker.path] = start }
        var nextPoll = pollInterval.map { start.addingTimeInterval($0) }
        var failures: [String: Int] = [:]
        while !stopping {
            let pending = notices
            notices = []
            if !pending.isEmpty {
                condition.unlock()
                for notice in pending { onEvent(notice) }
                condition.lock()
                continue
            }
            let now = clock.now
            if let interval = pollInterval {
                if nextPoll == nil { nextPoll = now.addingTimeInterval(interval) }
                if let poll = nextPoll, poll <= now {
                    for checker in checkers where due[checker.path] == nil { due[checker.path] = now }
                    nextPoll = now.addingTimeInterval(interval)
                }
            }
            // Due now, or a decision waits for it (while a transfer is awaited: at the retry).
            let ready = checkers.filter { checker in
                due[checker.path].map { $0 <= now } ?? false || (decisions.waits(for: checker.path) && !checker.waitingForTransfer)
            }
            guard !ready.isEmpty else {
                // Until the next due time, or the next event (Foundation on Linux cannot wait until `distantFuture`).
                clock.wait(on: condition, until: ([nextPoll].compactMap { $0 } + due.values).min())
                continue
            }
            for checker in ready where due[checker.path].map({ $0 <= now }) ?? false {
                due[checker.path] = nil
                streamStart[checker.path] = nil
            }
            condition.unlock()
            for checker in ready {
                let succeeded = checkTakingDecision(checker)
                watchContainers(of: checker, watched: &watchedDirectories, tokens: &tokens)
                let count = succeeded || !checker.failedLastCheck ? 0 : failures[checker.path, default: 0] + 1
                failures[checker.path] = count
                if succeeded && checker.copiesOutstanding {
                    condition.lock()
                    if due[checker.path] == nil { due[checker.path] = clock.now.addingTimeInterval(settings.copyRecheck) }
                    condition.unlock()
                }
                guard !succeeded else { continue }
                // Waiting: again after `retryWait`. Failing: backing off, doubling up to the maximum.
                let delay = count == 0 ? settings.retryWait : min(settings.retryWait * pow(2, Double(count - 1)), settings.maximumBackoff)
                condition.lock()
                let retry = max(clock.now.addingTimeInterval(delay + settings.debounce), checker.retryNotBefore ?? .distantPast)
                if due[checker.path] == nil { due[checker.path] = retry }
                condition.unlock()
            }
            condition.lock()
        }
        condition.unlock()
        answerUntaken("the watch stopped before it was taken")
        onEvent(.stopped)
    }

    /// Notes `checker`'s share containers for the event thread and watches their folders (once each).
    private func watchContainers(of checker: any VaultChecking, watched: inout Set<String>, tokens: inout [Int]) {
        let paths = checker.containerPaths
        condition.lock()
        // Containers learnt by this check: one more check, for a change that landed while this one ran
        // and before their events were looked for (never a lost wake-up).
        if Set(paths) != Set(containers[checker.path] ?? []), !paths.isEmpty, due[checker.path] == nil {
            due[checker.path] = clock.now.addingTimeInterval(settings.debounce)
        }
        containers[checker.path] = paths
        condition.unlock()
        guard let source else { return }
        for directory in Set(paths.map(PathText.folder(of:))) where !watched.contains(directory) {
            watched.insert(directory)
            tokens.append(source.watch(directory, on: checker.fileSystem) { [weak self] event in self?.handle(event, watching: directory) })
        }
    }

    /// Checks the vault at `path` soon (after the debounce), as an event would; from any thread (a
    /// person approved one of its shared groups, say).
    public func checkSoon(_ path: String) {
        condition.lock()
        defer {
            condition.broadcast()
            condition.unlock()
        }
        guard checkers.contains(where: { $0.path == path }) else { return }
        due[path] = min(due[path] ?? .distantFuture, clock.now.addingTimeInterval(settings.debounce))
    }

    /// Ends `run` after the check in progress (never in the middle of a write); from any thread.
    public func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        condition.unlock()
    }

    private var isStopping: Bool {
        condition.lock()
        defer { condition.unlock() }
        return stopping
    }

    /// Marks the vaults `event` concerns (only a vault's own name and its conflict copies matter;
    /// temporary files never do), and wakes the loop. Each folder has its own registration, so an
    /// event for all of them (lost events) marks the vaults of `watched`, the folder registered.
    func handle(_ event: FileEvent, watching watched: String?) {
        condition.lock()
        defer {
            condition.broadcast()
            condition.unlock()
        }
        let now = clock.now
        /// Due after the quiet time, or when the stream this event belongs to has lasted its longest.
        func markEvent(_ path: String) {
            let start = streamStart[path] ?? now
            streamStart[path] = start
            due[path] = min(now.addingTimeInterval(settings.debounce), start.addingTimeInterval(max(settings.longestDebounce, 4 * settings.debounce)))
        }
        switch event {
        case .changed(let directory, let name), .removed(let directory, let name):
            for checker in checkers {
                let vaultName = PathText.name(of: checker.path)
                guard PathText.folder(of: checker.path) == directory else { continue }
                let isCopy = ConflictCopies.engine(ofName: name, forVaultNamed: vaultName, naming: settings.device.copyNaming) != nil
                if name == vaultName || isCopy { markEvent(checker.path) }
                // Opened during the debounce, so that the check finds it open.
                if isCopy, case .changed = event { checker.prepare(copyAt: PathText.joining(directory, name)) }
            }
            // A shared group's container, or a conflict copy of it, changed: its vault is checked (and shares kept in step).
            for (vault, paths) in containers where paths.contains(where: { container in
                PathText.folder(of: container) == directory && (name == PathText.name(of: container)
                    || ConflictCopies.engine(ofName: name, forVaultNamed: PathText.name(of: container), naming: settings.device.copyNaming) != nil)
            }) {
                markEvent(vault)
            }
        case .directoryGone(let directory), .directoryBack(let directory):
            for checker in checkers where PathText.folder(of: checker.path) == directory { markEvent(checker.path) }
        case .overflow:
            for checker in checkers where PathText.folder(of: checker.path) == watched {
                markEvent(checker.path)
                notices.append(.rescan(vault: checker.path))
            }
        case .unavailable(let reason):
            guard !announcedPolling else { return }
            announcedPolling = true
            if pollInterval == nil { pollInterval = settings.pollWhenUnavailable }
            notices.append(.pollingOnly(reason: reason))
        }
    }
}

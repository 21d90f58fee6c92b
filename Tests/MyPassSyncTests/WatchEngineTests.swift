import Foundation
import KDBXFormat
import MyPassCore
@testable import MyPassSync
@testable import SyncCommit
@testable import SyncFiles
@testable import SyncRemote
@testable import SyncState
@testable import SyncWatch
import Synchronization
import Testing
import TestSupport

/// The watch loop through the library: debounce, rescans, polling, back-off and stop, driven by a
/// file-event source the test controls and checkers that count; then once with real inotify.
@Suite("WatchEngine: the watch loop of the library", .serialized)
struct WatchEngineTests {
    /// A file-event source the test fires by hand.
    final class ManualSource: FileEventSource, Sendable {
        private struct State {
            var handlers: [Int: @Sendable (FileEvent) -> Void] = [:]
            var watchedDirectories: [String] = []
        }
        private let state = Mutex(State())

        func watch(_ directory: String, on fileSystem: FileSystem, handler: @escaping @Sendable (FileEvent) -> Void) -> Int {
            state.withLock { state in
                state.watchedDirectories.append(directory)
                state.handlers[state.handlers.count + 1] = handler
                return state.handlers.count
            }
        }

        func stopWatching(_ token: Int) { _ = state.withLock { $0.handlers.removeValue(forKey: token) } }

        var watchedDirectories: [String] { state.withLock { $0.watchedDirectories } }

        var activeHandlers: Int { state.withLock { $0.handlers.count } }

        func fire(_ event: FileEvent) {
            for handler in state.withLock({ Array($0.handlers.values) }) { handler(event) }
        }
    }

    /// A vault checker that records when it was checked and answers as told.
    final class CountingChecker: VaultChecking, Sendable {
        typealias Answer = (succeeded: Bool, failed: Bool, waitingForTransfer: Bool)
        private struct State {
            var times: [Date] = []
            var answers: [Answer] = []
            var failedLastCheck = false
            var waitingForTransfer = false
            var preparedPaths: [String] = []
            var copiesOutstanding = false
            var decisions: [(decision: Reconciler.Decision, at: Date)] = []
        }

        let path: String
        let fileSystem = FileSystem.real
        private let state = Mutex(State())
        /// The clock check times are read on (the engine's).
        private let clock: any WatchClock

        init(path: String, clock: any WatchClock = SystemClock()) {
            self.path = path
            self.clock = clock
        }

        /// The answers of the next checks (true once they run out).
        var answers: [Answer] {
            get { state.withLock { $0.answers } }
            set { state.withLock { $0.answers = newValue } }
        }
        var failedLastCheck: Bool { state.withLock { $0.failedLastCheck } }
        var waitingForTransfer: Bool { state.withLock { $0.waitingForTransfer } }

        func prepare(copyAt path: String) { state.withLock { $0.preparedPaths.append(path) } }

        /// Whether the checks leave copies in the folder that they neither folded nor told about.
        var copiesOutstanding: Bool {
            get { state.withLock { $0.copiesOutstanding } }
            set { state.withLock { $0.copiesOutstanding = newValue } }
        }

        /// The copies the engine asked to open ahead.
        var prepared: [String] { state.withLock { $0.preparedPaths } }

        func check() -> Bool {
            let now = clock.now
            return state.withLock { state in
                state.times.append(now)
                let answer = state.answers.isEmpty ? (succeeded: true, failed: false, waitingForTransfer: false) : state.answers.removeFirst()
                state.failedLastCheck = answer.failed
                state.waitingForTransfer = answer.waitingForTransfer
                return answer.succeeded
            }
        }

        var checkTimes: [Date] { state.withLock { $0.times } }

        /// A check that carries out `decision` (recorded with its time), answered as merged.
        func check(deciding decision: Reconciler.Decision) -> (succeeded: Bool, answer: WatcherDecision.Answer) {
            state.withLock { $0.decisions.append((decision, clock.now)) }
            let succeeded = check()
            return (succeeded, .success(WatcherDecision.Outcome(done: .merged, changes: [], backup: nil, wroteFile: true)))
        }

        /// The decisions carried out, with when.
        var decisions: [(decision: Reconciler.Decision, at: Date)] { state.withLock { $0.decisions } }
    }

    typealias Events = RecordedEvents

    private static let directory = "/watched/folder"

    /// Runs an engine over `checkers` on its own thread; `body` acts while it runs; then it is stopped.
    private func running(
        _ checkers: [CountingChecker], settings: WatchEngine.Settings, source: ManualSource?, events: Events,
        _ body: (WatchEngine) throws -> Void
    ) throws {
        let engine = WatchEngine(settings: settings, source: source, onEvent: { events.add($0) }) { _ in checkers }
        let finished = DispatchSemaphore(value: 0)
        Thread { engine.run(); finished.signal() }.start()
        try body(engine)
        engine.stop()
        #expect(finished.wait(timeout: .now() + 5) == .success, "run() did not end after stop()")
    }

    /// Polls `condition` (every 5 ms, at most `seconds`); the caller's expectations judge the outcome.
    private func waitUntil(_ seconds: Double = 3, _ condition: () -> Bool) {
        _ = pollUntil(timeout: seconds, interval: 0.005, condition)
    }

    @Test("a burst of events is one check after the quiet time; temp files and other names are not (on a clock the test moves)")
    func debounce() throws {
        let clock = ManualClock()
        let checker = CountingChecker(path: Self.directory + "/vault.kdbx", clock: clock)
        var settings = WatchEngine.Settings(device: DeviceSettings())
        settings.debounce = 0.3
        settings.clock = clock
        let source = ManualSource()
        let events = Events()
        try running([checker], settings: settings, source: source, events: events) { _ in
            #expect(clock.waitUntilAsleep())
            #expect(checker.checkTimes == [clock.now], "the first check at the start")
            #expect(source.watchedDirectories == [Self.directory])
            // A burst over 200 ms, each event less than the quiet time after the one before.
            for _ in 0..<5 {
                source.fire(.changed(directory: Self.directory, name: "vault.kdbx"))
                clock.advance(by: 0.05)
                #expect(clock.waitUntilAsleep())
            }
            let lastEvent = clock.now.addingTimeInterval(-0.05)
            source.fire(.changed(directory: Self.directory, name: ".vault.kdbx.tmp-123"))
            source.fire(.changed(directory: "/elsewhere", name: "vault.kdbx"))
            clock.advance(by: 0.2)  // 0.25 s after the last event: still quiet
            #expect(clock.waitUntilAsleep())
            #expect(checker.checkTimes.count == 1, "checked before the quiet time: \(checker.checkTimes)")
            clock.advance(by: 0.05)  // the quiet time after the last event
            #expect(clock.waitUntilAsleep())
            clock.advance(by: 10)  // and nothing more for long after
            #expect(clock.waitUntilAsleep())
            #expect(checker.checkTimes.map { $0.timeIntervalSince(lastEvent) }.last.map { abs($0 - 0.3) < 1e-6 } == true,
                    "one check, the quiet time after the last event: \(checker.checkTimes)")
            #expect(checker.checkTimes.count == 2, "one check for the burst, none for other names: \(checker.checkTimes.count)")
            #expect(checker.prepared.isEmpty, "only conflict copies are opened ahead")
            source.fire(.changed(directory: Self.directory, name: "vault.sync-conflict-20261130-120000-PHONE.kdbx"))
            #expect(checker.prepared == [Self.directory + "/vault.sync-conflict-20261130-120000-PHONE.kdbx"],
                    "a copy's arrival starts opening it at once, before the debounce")
            clock.advance(by: 0.3)
            #expect(clock.waitUntilAsleep())
            #expect(checker.checkTimes.count == 3, "a conflict copy's name marks its vault")
        }
        #expect(events.all.last == .stopped)
        #expect(source.activeHandlers == 0, "the engine's handlers stay registered after it stopped")
    }

    @Test("a check that leaves a copy neither folded nor told is checked again after copyRecheck with no file event, until none is left (on a clock the test moves)")
    func outstandingCopyRechecked() throws {
        let clock = ManualClock()
        let checker = CountingChecker(path: Self.directory + "/vault.kdbx", clock: clock)
        checker.copiesOutstanding = true
        var settings = WatchEngine.Settings(device: DeviceSettings())
        settings.clock = clock
        settings.copyRecheck = 10
        let source = ManualSource()
        try running([checker], settings: settings, source: source, events: Events()) { _ in
            #expect(clock.waitUntilAsleep())
            #expect(checker.checkTimes.count == 1, "the first check at the start")
            clock.advance(by: 9.9)
            #expect(clock.waitUntilAsleep())
            #expect(checker.checkTimes.count == 1, "checked again before copyRecheck: \(checker.checkTimes)")
            clock.advance(by: 0.1)
            #expect(clock.waitUntilAsleep())
            #expect(checker.checkTimes.count == 2, "no second check although a copy was left: \(checker.checkTimes)")
            checker.copiesOutstanding = false
            clock.advance(by: 10)
            #expect(clock.waitUntilAsleep())
            #expect(checker.checkTimes.count == 3, "the check that finds it still there")
            clock.advance(by: 100)
            #expect(clock.waitUntilAsleep())
            #expect(checker.checkTimes.count == 3, "nothing left: no more checks without events")
        }
    }

    @Test("a file rewritten more often than the quiet time is still checked, the longest debounce after its first event")
    func endlessStream() throws {
        let clock = ManualClock()
        let checker = CountingChecker(path: Self.directory + "/vault.kdbx", clock: clock)
        var settings = WatchEngine.Settings(device: DeviceSettings())
        settings.debounce = 0.5
        settings.longestDebounce = 2
        settings.clock = clock
        let source = ManualSource()
        try running([checker], settings: settings, source: source, events: Events()) { _ in
            #expect(clock.waitUntilAsleep())
            let firstEvent = clock.now
            // An event every 0.25 s for 5 s: never half a second of quiet.
            for _ in 0..<20 {
                source.fire(.changed(directory: Self.directory, name: "vault.kdbx"))
                clock.advance(by: 0.25)
                #expect(clock.waitUntilAsleep())
            }
            let offsets = checker.checkTimes.dropFirst().map { $0.timeIntervalSince(firstEvent) }
            // Checked at 2 s (the stream began at 0), then 2 s after the next event began a new stream.
            #expect(offsets.count == 2, "\(offsets)")
            #expect(offsets.first.map { abs($0 - 2) < 1e-6 } == true, "\(offsets)")
            #expect(offsets.dropFirst().first.map { abs($0 - 4) < 1e-6 } == true, "\(offsets)")
            clock.advance(by: 0.25)  // the quiet time after the last event (at 4.75 s)
            #expect(clock.waitUntilAsleep())
            let last = checker.checkTimes.last.map { $0.timeIntervalSince(firstEvent) }
            #expect(checker.checkTimes.count == 4 && last.map { abs($0 - 5.25) < 1e-6 } == true,
                    "the end of the stream is checked after the quiet time: \(checker.checkTimes.map { $0.timeIntervalSince(firstEvent) })")
        }
    }

    @Test("lost events rescan every vault and say so; a folder that comes back is checked")
    func overflowAndDirectoryBack() throws {
        let first = CountingChecker(path: Self.directory + "/a.kdbx")
        let second = CountingChecker(path: "/other/b.kdbx")
        var settings = WatchEngine.Settings(device: DeviceSettings())
        settings.debounce = 0.05
        let source = ManualSource()
        let events = Events()
        try running([first, second], settings: settings, source: source, events: events) { _ in
            waitUntil { first.checkTimes.count == 1 && second.checkTimes.count == 1 }
            source.fire(.overflow)
            waitUntil { first.checkTimes.count == 2 && second.checkTimes.count == 2 }
            #expect(first.checkTimes.count == 2 && second.checkTimes.count == 2)
            #expect(events.all.filter { $0.kind == .rescan }.map(\.vault).sorted() == [first.path, second.path].sorted())
            source.fire(.directoryBack("/other"))
            waitUntil { second.checkTimes.count == 3 }
            #expect(second.checkTimes.count == 3 && first.checkTimes.count == 2, "only the vault in the folder that came back")
        }
    }

    @Test("without file events the folders are polled, said once")
    func pollingWhenUnavailable() throws {
        let checker = CountingChecker(path: Self.directory + "/vault.kdbx")
        var settings = WatchEngine.Settings(device: DeviceSettings())
        settings.debounce = 0
        settings.pollWhenUnavailable = 0.1
        let source = ManualSource()
        let events = Events()
        try running([checker], settings: settings, source: source, events: events) { _ in
            waitUntil { checker.checkTimes.count == 1 }
            source.fire(.unavailable(reason: "the inotify watch limit is reached"))
            source.fire(.unavailable(reason: "the inotify watch limit is reached"))
            waitUntil { checker.checkTimes.count >= 5 }
            #expect(checker.checkTimes.count >= 5, "polled every 0.1 s: \(checker.checkTimes.count) checks")
        }
        #expect(events.all.filter { $0.kind == .pollingOnly }.count == 1)
    }

    @Test("a failing check backs off, doubling up to the maximum; a waiting one retries at the retry wait (on a clock the test moves)")
    func backoff() throws {
        let clock = ManualClock()
        let failing = CountingChecker(path: Self.directory + "/failing.kdbx", clock: clock)
        failing.answers = Array(repeating: (false, true, false), count: 7)
        let waiting = CountingChecker(path: Self.directory + "/waiting.kdbx", clock: clock)
        waiting.answers = Array(repeating: (false, false, false), count: 4)
        var settings = WatchEngine.Settings(device: DeviceSettings())
        settings.debounce = 0
        // Powers of two, so that the clock's steps add up exactly.
        settings.retryWait = 0.0625
        settings.maximumBackoff = 0.25
        settings.clock = clock
        try running([failing, waiting], settings: settings, source: ManualSource(), events: Events()) { _ in
            #expect(clock.waitUntilAsleep())
            for _ in 0..<128 {  // 2 s in steps of 1/64 s
                clock.advance(by: 1.0 / 64)
                #expect(clock.waitUntilAsleep())
            }
        }
        func gaps(_ times: [Date]) -> [Double] {
            zip(times.dropFirst(), times).map { $0.timeIntervalSince($1) }
        }
        // The retry wait, doubling, then the maximum; after the seventh failure the eighth check
        // succeeds and no more come.
        #expect(gaps(failing.checkTimes) == [0.0625, 0.125, 0.25, 0.25, 0.25, 0.25, 0.25], "\(gaps(failing.checkTimes))")
        // A wait is not a failure: the retry wait each time, then success.
        #expect(gaps(waiting.checkTimes) == [0.0625, 0.0625, 0.0625, 0.0625], "\(gaps(waiting.checkTimes))")
    }

    @Test("a decision is taken by the running loop at its next turn (woken at once, no due time), answered, and leaves the debounce in progress alone (on a clock the test moves)")
    func decisionTakenInLoop() throws {
        let clock = ManualClock()
        let checker = CountingChecker(path: Self.directory + "/vault.kdbx", clock: clock)
        var settings = WatchEngine.Settings(device: DeviceSettings())
        settings.debounce = 0.3
        settings.clock = clock
        let source = ManualSource()
        try running([checker], settings: settings, source: source, events: Events()) { engine in
            #expect(clock.waitUntilAsleep())
            source.fire(.changed(directory: Self.directory, name: "vault.kdbx"))
            #expect(clock.waitUntilAsleep())
            let asked = clock.now
            let answer = Mutex<WatcherDecision.Answer?>(nil)
            let answered = DispatchSemaphore(value: 0)
            Thread {
                answer.withLock { $0 = engine.decide(.merge, about: "the version asked about", timeout: 5) }
                answered.signal()
            }.start()
            #expect(answered.wait(timeout: .now() + 5) == .success, "the loop did not take the decision")
            guard case .success(let outcome)? = answer.withLock({ $0 }) else { Issue.record("\(String(describing: answer.withLock { $0 }))"); return }
            #expect(outcome.done == .merged)
            #expect(checker.decisions.map(\.decision) == [Reconciler.Decision(.merge, about: "the version asked about")])
            #expect(checker.decisions.map(\.at) == [asked], "taken later than at the loop's next turn")
            #expect(checker.checkTimes.count == 2, "the start's check and the decision's")
            clock.advance(by: 0.3)
            #expect(clock.waitUntilAsleep())
            #expect(checker.checkTimes.count == 3, "the event's check after its quiet time was dropped")
            #expect(checker.decisions.count == 1)
        }
    }

    @Test("a decision submitted to an engine that stops is answered as not taken; decideOnce carries one out in one check")
    func decisionNotTaken() {
        let checker = CountingChecker(path: Self.directory + "/vault.kdbx")
        let engine = WatchEngine(settings: WatchEngine.Settings(device: DeviceSettings()), source: nil, onEvent: { _ in }) { _ in [checker] }
        let answer = Mutex<WatcherDecision.Answer?>(nil)
        engine.submit(.reload, about: nil) { given in answer.withLock { $0 = given } }
        engine.stop()
        engine.run()
        guard case .failure(.notTaken)? = answer.withLock({ $0 }) else { Issue.record("\(String(describing: answer.withLock { $0 }))"); return }
        #expect(checker.decisions.isEmpty)
        let once = WatchEngine(settings: WatchEngine.Settings(device: DeviceSettings()), source: nil, onEvent: { _ in }) { _ in [checker] }
        guard case .success = once.decideOnce(.overwrite, about: "v") else { Issue.record("not carried out"); return }
        #expect(checker.decisions.map(\.decision) == [Reconciler.Decision(.overwrite, about: "v")])
    }

    @Test("runOnce waits (bounded) while a sync engine transfers, then returns")
    func onceWaitsForTransfer() {
        let checker = CountingChecker(path: Self.directory + "/vault.kdbx")
        checker.answers = [(false, false, true), (false, false, true), (true, false, false)]
        let engine = WatchEngine(settings: WatchEngine.Settings(device: DeviceSettings()), source: nil, onEvent: { _ in }) { _ in [checker] }
        engine.runOnce(transferWait: 5)
        #expect(checker.checkTimes.count == 3)
        let bounded = CountingChecker(path: Self.directory + "/stuck.kdbx")
        bounded.answers = Array(repeating: (false, false, true), count: 1000)
        let start = Date()
        WatchEngine(settings: WatchEngine.Settings(device: DeviceSettings()), source: nil, onEvent: { _ in }) { _ in [bounded] }.runOnce(transferWait: 0.5)
        #expect(Date().timeIntervalSince(start) < 2, "the wait for a transfer is bounded")
    }

    @Test("with real inotify: a conflict copy renamed in is merged and retired, reported as a typed event")
    func realInotify() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        // The other device's version: one more entry.
        let other = try SyncSession(path: workspace.vaultPath, key: Workspace.key,
                                    state: SyncStateStore(directory: workspace.directory.appendingPathComponent("other-state").path), settings: DeviceSettings())
        let theirs = try other.vault.addingEntry(title: "From the phone", to: other.vault.root.uuid).vault
        let copyBytes = try KDBXWriter.serialize(theirs, settings: other.settings, key: Workspace.key).file
        let events = Events()
        var settings = WatchEngine.Settings(device: DeviceSettings())
        settings.debounce = 0.1
        let engine = WatchEngine(vaults: [workspace.vaultPath], credentials: VaultCredentials(key: Workspace.key), limits: .standard,
                                 state: workspace.state, settings: settings) { events.add($0) }
        let finished = DispatchSemaphore(value: 0)
        Thread { engine.run(); finished.signal() }.start()
        waitUntil { events.all.contains { $0.kind == .baseRecorded } }
        let staging = workspace.directory.appendingPathComponent(".staging").path
        try copyBytes.write(to: URL(fileURLWithPath: staging))
        let copyPath = workspace.directory.appendingPathComponent("vault.sync-conflict-20261130-120000-PHONE.kdbx").path
        #expect(rename(staging, copyPath) == 0)
        waitUntil(10) { events.all.contains { $0.kind == .conflictCopyMerged } }
        engine.stop()
        #expect(finished.wait(timeout: .now() + 5) == .success)
        let merged = events.all.first { $0.kind == .conflictCopyMerged }
        guard case .conflictCopyMerged(let vault, let copy, let keptAs, let changes, _)? = merged else {
            Issue.record("no merge event: \(events.all)")
            return
        }
        #expect(vault == DurableFile.resolvedPath(workspace.vaultPath, on: .real) && copy == copyPath && !keptAs.isEmpty)
        #expect(changes.contains { $0.kind == .added && $0.title == "From the phone" })
        #expect(!FileManager.default.fileExists(atPath: copyPath), "the copy was left in the folder")
        let now = try KDBXReader.open(workspace.bytes(), key: Workspace.key).vault
        #expect(now.root.allEntries().contains { $0.entry.title == "From the phone" })
        #expect(merged?.jsonLine(at: Date()).contains("\"kind\":\"conflictCopyMerged\"") == true)
    }
}

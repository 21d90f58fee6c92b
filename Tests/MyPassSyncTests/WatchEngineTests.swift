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

        func watch(_ directory: String, handler: @escaping @Sendable (FileEvent) -> Void) -> Int {
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
        }

        let path: String
        private let state = Mutex(State())

        init(path: String) { self.path = path }

        /// The answers of the next checks (true once they run out).
        var answers: [Answer] {
            get { state.withLock { $0.answers } }
            set { state.withLock { $0.answers = newValue } }
        }
        var failedLastCheck: Bool { state.withLock { $0.failedLastCheck } }
        var waitingForTransfer: Bool { state.withLock { $0.waitingForTransfer } }

        func prepare(copyAt path: String) { state.withLock { $0.preparedPaths.append(path) } }

        /// The copies the engine asked to open ahead.
        var prepared: [String] { state.withLock { $0.preparedPaths } }

        func check() -> Bool {
            state.withLock { state in
                state.times.append(Date())
                let answer = state.answers.isEmpty ? (succeeded: true, failed: false, waitingForTransfer: false) : state.answers.removeFirst()
                state.failedLastCheck = answer.failed
                state.waitingForTransfer = answer.waitingForTransfer
                return answer.succeeded
            }
        }

        var checkTimes: [Date] { state.withLock { $0.times } }
    }

    final class Events: Sendable {
        private let list = Mutex<[WatchEvent]>([])
        func add(_ event: WatchEvent) { list.withLock { $0.append(event) } }
        var all: [WatchEvent] { list.withLock { $0 } }
    }

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

    @Test("a burst of events is one check after the quiet time; temp files and other names are not")
    func debounce() throws {
        let checker = CountingChecker(path: Self.directory + "/vault.kdbx")
        var settings = WatchEngine.Settings()
        settings.debounce = 0.3
        let source = ManualSource()
        let events = Events()
        try running([checker], settings: settings, source: source, events: events) { _ in
            waitUntil { checker.checkTimes.count == 1 }  // the first check at the start
            #expect(source.watchedDirectories == [Self.directory])
            let burstStart = Date()
            for _ in 0..<5 {
                source.fire(.changed(directory: Self.directory, name: "vault.kdbx"))
                usleep(40_000)  // Kept: the burst is spread over 200 ms, less than the quiet time (what is tested).
            }
            source.fire(.changed(directory: Self.directory, name: ".vault.kdbx.tmp-123"))
            source.fire(.changed(directory: "/elsewhere", name: "vault.kdbx"))
            waitUntil { checker.checkTimes.count >= 2 }
            usleep(500_000)  // Kept: what is checked is that nothing more happens (no third check) for over a quiet time.
            let times = checker.checkTimes
            #expect(times.count == 2, "one check for the burst, none for other names: \(times.count)")
            if times.count == 2 { #expect(times[1].timeIntervalSince(burstStart) >= 0.3 + 0.16, "checked before the quiet time") }
            #expect(checker.prepared.isEmpty, "only conflict copies are opened ahead")
            source.fire(.changed(directory: Self.directory, name: "vault.sync-conflict-20261130-120000-PHONE.kdbx"))
            #expect(checker.prepared == [Self.directory + "/vault.sync-conflict-20261130-120000-PHONE.kdbx"],
                    "a copy's arrival starts opening it at once, before the debounce")
            waitUntil { checker.checkTimes.count == 3 }
            #expect(checker.checkTimes.count == 3, "a conflict copy's name marks its vault")
        }
        #expect(events.all.last == .stopped)
        #expect(source.activeHandlers == 0, "the engine's handlers stay registered after it stopped")
    }

    @Test("lost events rescan every vault and say so; a folder that comes back is checked")
    func overflowAndDirectoryBack() throws {
        let first = CountingChecker(path: Self.directory + "/a.kdbx")
        let second = CountingChecker(path: "/other/b.kdbx")
        var settings = WatchEngine.Settings()
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
        var settings = WatchEngine.Settings()
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

    @Test("a failing check backs off, doubling up to the maximum; a waiting one retries at the retry wait")
    func backoff() throws {
        let failing = CountingChecker(path: Self.directory + "/failing.kdbx")
        failing.answers = Array(repeating: (false, true, false), count: 7)
        let waiting = CountingChecker(path: Self.directory + "/waiting.kdbx")
        waiting.answers = Array(repeating: (false, false, false), count: 4)
        var settings = WatchEngine.Settings()
        settings.debounce = 0
        settings.retryWait = 0.05
        settings.maximumBackoff = 0.2
        try running([failing, waiting], settings: settings, source: ManualSource(), events: Events()) { _ in
            waitUntil(5) { failing.checkTimes.count >= 8 && waiting.checkTimes.count >= 5 }
        }
        let gaps = zip(failing.checkTimes.dropFirst(), failing.checkTimes).map { $0.timeIntervalSince($1) }
        #expect(gaps.count >= 7, "\(gaps)")
        guard gaps.count >= 7 else { return }
        // 0.05, 0.1, 0.2, then the maximum 0.2 (with scheduling slack).
        #expect(gaps[0] >= 0.045 && gaps[0] < 0.09, "\(gaps)")
        #expect(gaps[1] >= 0.095 && gaps[1] < 0.17, "\(gaps)")
        #expect(gaps[2] >= 0.195 && gaps[2] < 0.3, "\(gaps)")
        #expect(gaps[3...5].allSatisfy { $0 >= 0.195 && $0 < 0.3 }, "not capped at the maximum: \(gaps)")
        let waits = zip(waiting.checkTimes.dropFirst(), waiting.checkTimes).map { $0.timeIntervalSince($1) }
        #expect(waits.prefix(4).allSatisfy { $0 >= 0.045 && $0 < 0.12 }, "a wait is not a failure: \(waits)")
    }

    @Test("runOnce waits (bounded) while a sync engine transfers, then returns")
    func onceWaitsForTransfer() {
        let checker = CountingChecker(path: Self.directory + "/vault.kdbx")
        checker.answers = [(false, false, true), (false, false, true), (true, false, false)]
        let engine = WatchEngine(settings: WatchEngine.Settings(), source: nil, onEvent: { _ in }) { _ in [checker] }
        engine.runOnce(transferWait: 5)
        #expect(checker.checkTimes.count == 3)
        let bounded = CountingChecker(path: Self.directory + "/stuck.kdbx")
        bounded.answers = Array(repeating: (false, false, true), count: 1000)
        let start = Date()
        WatchEngine(settings: WatchEngine.Settings(), source: nil, onEvent: { _ in }) { _ in [bounded] }.runOnce(transferWait: 0.5)
        #expect(Date().timeIntervalSince(start) < 2, "the wait for a transfer is bounded")
    }

    @Test("with real inotify: a conflict copy renamed in is merged and retired, reported as a typed event")
    func realInotify() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        // The other device's version: one more entry.
        let other = try SyncSession(path: workspace.vaultPath, key: Workspace.key,
                                    state: SyncStateStore(directory: workspace.directory.appendingPathComponent("other-state").path))
        let theirs = try other.vault.addingEntry(title: "From the phone", to: other.vault.root.uuid).vault
        let copyBytes = try KDBXWriter.serialize(theirs, settings: other.settings, key: Workspace.key).file
        let events = Events()
        var settings = WatchEngine.Settings()
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
        #expect(vault == DurableFile.resolvedPath(workspace.vaultPath) && copy == copyPath && !keptAs.isEmpty)
        #expect(changes.contains { $0.kind == .added && $0.title == "From the phone" })
        #expect(!FileManager.default.fileExists(atPath: copyPath), "the copy was left in the folder")
        let now = try KDBXReader.open(workspace.bytes(), key: Workspace.key).vault
        #expect(now.root.allEntries().contains { $0.entry.title == "From the phone" })
        #expect(merged?.jsonLine(at: Date()).contains("\"kind\":\"conflictCopyMerged\"") == true)
    }
}

import Foundation
import Synchronization
import Testing
import TestSupport
import KDBXFormat
import MyPassCore
import MyPassCrypto
@testable import SyncCommit
import SyncFiles
import SyncState
@testable import SyncDaemon
@testable import SyncWatch

/// A decision is carried out inside the vault's running engine: its watcher's memory (graces, holds)
/// goes on through it, and the daemon neither stops nor starts an engine for it.
@Suite("Decisions: taken in the running engine", .serialized)
struct DaemonDecisionTests {
    typealias Events = RecordedEvents

    /// The workspace's vault as another device saved it, an entry `title` added, put in place by
    /// rename; its SHA-256.
    private func saveElsewhere(_ workspace: Workspace, adding title: String, at seconds: Int64) throws -> String {
        let current = try KDBXReader.open(try workspace.bytes(), key: Workspace.key).vault
        let changed = try current.addingEntry(title: title, password: "x", to: current.root.uuid, at: Timestamp(unixSeconds: 1_800_000_000 + seconds)).vault
        let settings = FormatSettings(version: .v4_0, cipher: .chaCha20, kdf: .aesKDF(seed: Data(repeating: 2, count: 32), rounds: 10))
        let bytes = try KDBXWriter.serialize(changed, settings: settings, key: Workspace.key).file
        let incoming = workspace.directory.appendingPathComponent("incoming-\(seconds).kdbx")
        try bytes.write(to: incoming)
        #expect(rename(incoming.path, workspace.vaultPath) == 0)
        return SHA256.hexHash(bytes)
    }

    /// Whether the decision about `version` was asked for.
    private static func asked(_ events: Events, about version: String) -> Bool {
        events.all.contains { if case .decisionNeeded(_, version) = $0 { true } else { false } }
    }

    @Test("a copy's grace that began before a decision ends when it would have without one: the decision does not restart the watcher's memory (on a clock the test moves)")
    func graceKeptThroughDecision() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let clock = ManualClock()
        let source = WatchEngineTests.ManualSource()
        let events = Events()
        var settings = WatchEngine.Settings(device: DeviceSettings())
        settings.policy = .ask
        settings.copyGrace = 30
        settings.debounce = 0.3
        settings.clock = clock
        let engine = WatchEngine(vaults: [workspace.vaultPath], credentials: VaultCredentials(key: Workspace.key), limits: .standard,
                                 state: workspace.state, settings: settings, source: source) { events.add($0) }
        let folder = PathText.folder(of: engine.vaults[0])
        let finished = DispatchSemaphore(value: 0)
        Thread { engine.run(); finished.signal() }.start()
        defer {
            engine.stop()
            #expect(finished.wait(timeout: .now() + 5) == .success)
        }
        #expect(clock.waitUntilAsleep())
        #expect(events.all.contains { $0.kind == .baseRecorded })
        // Another device's conflict copy: left to that device for the grace.
        let other = try SyncSession(path: workspace.vaultPath, key: Workspace.key,
                                    state: SyncStateStore(directory: workspace.directory.appendingPathComponent("other-state").path), settings: DeviceSettings())
        let theirs = try other.vault.addingEntry(title: "From the phone", to: other.vault.root.uuid).vault
        let staging = workspace.directory.appendingPathComponent(".staging").path
        try KDBXWriter.serialize(theirs, settings: other.settings, key: Workspace.key).file.write(to: URL(fileURLWithPath: staging))
        let copyName = "vault.sync-conflict-20261130-120000-PHONE.kdbx"
        #expect(rename(staging, folder + "/" + copyName) == 0)
        source.fire(.changed(directory: folder, name: copyName))
        clock.advance(by: 0.3)
        #expect(clock.waitUntilAsleep())
        let copySeen = clock.now
        // A change on disk under ask: a question, decided ten seconds later.
        let asked = try saveElsewhere(workspace, adding: "Asked about", at: 100)
        source.fire(.changed(directory: folder, name: "vault.kdbx"))
        clock.advance(by: 0.3)
        #expect(clock.waitUntilAsleep())
        #expect(Self.asked(events, about: asked), "\(events.all.map(\.kind))")
        clock.advance(by: 10)
        #expect(clock.waitUntilAsleep())
        let answer = Mutex<WatcherDecision.Answer?>(nil)
        let answered = DispatchSemaphore(value: 0)
        Thread {
            answer.withLock { $0 = engine.decide(.merge, about: asked, timeout: 10) }
            answered.signal()
        }.start()
        #expect(answered.wait(timeout: .now() + 10) == .success, "the decision was not answered")
        guard case .success(let outcome)? = answer.withLock({ $0 }) else { Issue.record("\(String(describing: answer.withLock { $0 }))"); return }
        #expect(outcome.done == .merged, "\(outcome.summary)")
        #expect(!events.all.contains { $0.kind == .conflictCopyMerged }, "the copy was merged within its grace")
        // Until the grace since the copy was first seen has passed (and one retry): far less than
        // 30 s after the decision, when a watcher that forgot would let it go.
        while clock.now < copySeen.addingTimeInterval(32) {
            clock.advance(by: 0.5)
            #expect(clock.waitUntilAsleep())
        }
        #expect(events.all.contains { $0.kind == .conflictCopyMerged }, "the grace restarted at the decision: \(events.all.map(\.kind))")
    }

    @Test("daemon decide hands the decision to the vault's running engine: the same engine before and after, none stopped or started")
    func daemonKeepsEngine() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let path = DurableFile.canonicalPath(workspace.vaultPath, on: .real)
        var vault = DaemonVault(path: path, credentials: CredentialReference(password: .command("echo sync-test")))
        vault.policy = .ask
        var configuration = DaemonConfiguration()
        configuration.vaults = [vault]
        let configurationPath = workspace.directory.appendingPathComponent("daemon.conf").path
        try configuration.save(to: configurationPath)
        let events = Events()
        let daemon = VaultDaemon(configurationPath: configurationPath, state: workspace.state, device: DeviceSettings(), notifier: nil,
                                 log: { _ in }, onEvent: { events.add($0) })
        #expect(daemon.reload().added == [path])
        defer { daemon.stop() }
        #expect(pollUntil(timeout: 10) { events.all.contains { $0.kind == .baseRecorded } }, "\(events.all)")
        let watched = try daemon.vault(path)
        let engine = try #require(watched.engine)
        #expect(watched.enginesStarted == 1)
        let asked = try saveElsewhere(workspace, adding: "Asked about", at: 100)
        #expect(pollUntil(timeout: 10) { Self.asked(events, about: asked) }, "\(events.all)")
        let done = try daemon.decide(path, .merge)
        #expect(done.contains("merged with this device's"), "\(done)")
        #expect(watched.engine === engine && watched.enginesStarted == 1, "the decision stopped or started an engine")
        #expect(workspace.state.base(for: path)?.record.fingerprint.sha256 == asked)
        #expect(daemon.status().vaults.first?.state == .watching)
        #expect(throws: VaultDaemon.ControlFailure.noDecisionPending(path)) { _ = try daemon.decide(path, .merge) }
    }
}

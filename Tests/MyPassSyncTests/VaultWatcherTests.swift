import Foundation
import KDBXFormat
import MyPassCore
import MyPassMerge
@testable import MyPassSync
import Testing
import TestSupport

/// The watcher's reaction to a new version of the vault, driven step by step (no inotify).
@Suite("VaultWatcher: new versions taken in, lost content put back, nothing written otherwise", .serialized)
struct VaultWatcherTests {
    private final class Events: @unchecked Sendable {
        private let lock = NSLock()
        private var kinds: [String] = []
        private var lines: [String] = []
        func add(_ event: WatchEvent) {
            lock.lock()
            kinds.append(event.kind.rawValue)
            lines.append("\(event.kind): \(event.detail) \(event.changes.map { "\($0.kind) \($0.title) \($0.fields)" })")
            lock.unlock()
        }
        var all: [String] { lock.lock(); defer { lock.unlock() }; return kinds }
        /// Every event with its detail and changes, for a failure's message.
        var described: [String] { lock.lock(); defer { lock.unlock() }; return lines }
    }

    private static let password = "kxc-fixture-pässword"

    private func keepassxc(_ arguments: [String]) throws {
        let result = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), ["keepassxc-cli", arguments[0], "-q"] + arguments.dropFirst(),
                                           input: Data((Self.password + "\n").utf8), environment: ["QT_QPA_PLATFORM": "offscreen"])
        #expect(result.status == 0, "\(result.standardError)")
    }

    @Test("a version KeePassXC re-saved (its own order of fields) that descends from the synced one is taken in without a write")
    func descendantNotRewritten() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let key = try CompositeKey(password: Self.password)
        try FileManager.default.removeItem(atPath: workspace.vaultPath)
        try FileManager.default.copyItem(atPath: FileManager.default.currentDirectoryPath + "/Fixtures/vaults/kxc-3.1-aes-aeskdf-gzip.kdbx",
                                         toPath: workspace.vaultPath)
        // An entry added here (this project's order of fields), then the file re-saved by KeePassXC
        // with an edit elsewhere (KeePassXC writes fields sorted).
        let session = try SyncSession(path: workspace.vaultPath, key: key, state: workspace.state)
        session.update(try session.vault.addingEntry(title: "Ours", userName: "u", to: session.vault.root.uuid).vault)
        #expect(try session.saveMerging().wroteFile)
        let events = Events()
        let watcher = VaultWatcher(path: workspace.vaultPath, key: key, state: workspace.state, limits: .standard, policy: .merge,
                                   copyPolicy: .merge) { events.add($0) }
        #expect(watcher.check())
        let edited = workspace.directory.appendingPathComponent("edited.kdbx").path
        try FileManager.default.copyItem(atPath: workspace.vaultPath, toPath: edited)
        try keepassxc(["edit", edited, "Ünïcode Bank", "--url", "https://bank.example"])
        #expect(rename(edited, workspace.vaultPath) == 0)
        let before = try workspace.bytes()
        #expect(watcher.check())
        #expect(events.all.contains("reloaded") && !events.all.contains("restored"), "\(events.all)")
        #expect(try workspace.bytes() == before, "the new version was rewritten")
        // A blind save that drops "Ours" (made from the fixture, which never had it) is repaired.
        let blind = workspace.directory.appendingPathComponent("blind.kdbx").path
        try FileManager.default.copyItem(atPath: FileManager.default.currentDirectoryPath + "/Fixtures/vaults/kxc-3.1-aes-aeskdf-gzip.kdbx",
                                         toPath: blind)
        try keepassxc(["add", blind, "Blind", "-u", "b"])
        #expect(rename(blind, workspace.vaultPath) == 0)
        #expect(watcher.check())
        #expect(events.all.filter { $0 == "restored" }.count == 1, "\(events.all)")
        let titles = try KDBXReader.open(workspace.bytes(), key: key).vault.root.entries.map(\.title)
        #expect(titles.contains("Ours") && titles.contains("Blind"), "\(titles)")
        // The restored version is this watcher's own write: the next check does nothing.
        let restored = try workspace.bytes()
        #expect(watcher.check())
        #expect(try workspace.bytes() == restored, "\(events.described)")
        #expect(events.all.last == "ownWriteIgnored", "\(events.described)")
    }
}

import Foundation
import Synchronization
import Testing
import KDBXFormat
import MyPassCore
import SyncCommit
import SyncFiles
import SyncState
import SyncWatch

/// Planted copies cost a vault no more than its allowance of time for opening versions from
/// elsewhere: beyond it they wait (told once, never remembered as failed) and are folded once the
/// window has room again (real files, real derivations).
@Suite("Watcher: copies beyond the vault's opening allowance wait", .serialized)
struct ForeignWorkWatcherTests {
    /// Writes a copy of the workspace's vault with an entry added and its own KDF salt (so opening
    /// it derives a key), under a Syncthing conflict name.
    private func plantCopy(_ workspace: Workspace, index: Int) throws {
        let vault = try KDBXReader.open(try workspace.bytes(), key: Workspace.key).vault
        let changed = try vault.addingEntry(title: "Planted \(index)", password: "p\(index)", to: vault.root.uuid,
                                            at: Timestamp(unixSeconds: 1_800_000_100 + Int64(index))).vault
        let settings = FormatSettings(version: .v4_0, cipher: .chaCha20,
                                      kdf: .aesKDF(seed: Data(repeating: UInt8(10 + index), count: 32), rounds: 2_000_000))
        let name = "vault.sync-conflict-20261204-10101\(index)-PLANTD\(index).kdbx"
        try KDBXWriter.serialize(changed, settings: settings, key: Workspace.key).file.write(to: workspace.directory.appendingPathComponent(name))
    }

    /// Writes junk under a conflict name: the vault's bytes with its payload's last bytes flipped
    /// (what anyone can plant without the password: it never opens).
    private func plantJunk(_ workspace: Workspace, index: Int) throws {
        var bytes = [UInt8](try workspace.bytes())
        for offset in 1...16 { bytes[bytes.count - offset] ^= 0xA5 }
        try Data(bytes).write(to: workspace.directory.appendingPathComponent("vault.sync-conflict-20261204-10102\(index)-JUNKJU\(index).kdbx"))
    }

    @Test("junk that fails to open spends the allowance; then every copy waits, told once; once the window has room the junk is left and the real copy folded")
    func copiesWaitForRoom() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let events = Mutex<[WatchEvent]>([])
        // Any failed opening spends this allowance; the window is short so that the test sees it refill.
        let allowance = ForeignWorkAllowance(seconds: 0.000_001, per: 2)
        let watcher = VaultWatcher(context: VaultContext(path: workspace.vaultPath, key: Workspace.key, limits: .standard, state: workspace.state, settings: DeviceSettings()),
                                   policy: Reconciler.Policy(), allowance: allowance) { event in events.withLock { $0.append(event) } }
        #expect(watcher.check())
        for index in 1...3 { try plantJunk(workspace, index: index) }
        #expect(!watcher.check(), "copies put off: the check waits")
        var kinds = events.withLock { $0.map(\.kind) }
        #expect(kinds.filter { $0 == .conflictCopyLeft }.count == 1, "one junk copy opened within the allowance: \(kinds)")
        guard case .copiesWaiting(_, let waiting, let until)? = events.withLock({ $0.first { $0.kind == .copiesWaiting } }) else {
            Issue.record("not told: \(kinds)"); return
        }
        #expect(waiting.count == 2 && until > Date(), "\(waiting), \(until)")
        #expect(watcher.retryNotBefore.map { $0 > Date().addingTimeInterval(1) } == true, "retried before the window has room")
        // A real copy arriving meanwhile waits too, and nobody is told twice.
        try plantCopy(workspace, index: 1)
        #expect(!watcher.check())
        #expect(events.withLock { $0.filter { $0.kind == .copiesWaiting }.count } == 1, "told again while still waiting")
        var rounds = 0
        while !(events.withLock({ $0.contains { $0.kind == .conflictCopyMerged } }) && events.withLock({ $0.filter { $0.kind == .conflictCopyLeft }.count }) == 3),
              rounds < 12 {
            Thread.sleep(until: max(Date(), allowance.nextRoom(at: Date())).addingTimeInterval(0.05))
            _ = watcher.check()
            rounds += 1
        }
        kinds = events.withLock { $0.map(\.kind) }
        #expect(kinds.filter { $0 == .conflictCopyLeft }.count == 3 && kinds.contains(.conflictCopyMerged), "\(kinds)")
        let titles = try KDBXReader.open(try workspace.bytes(), key: Workspace.key).vault.root.entries.map(\.title)
        #expect(titles.contains("Planted 1"), "\(titles)")
    }

    @Test("copies that open are not counted: four real copies with their own key derivations fold at once under a spent-looking allowance")
    func openingCopiesNotCounted() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let events = Mutex<[WatchEvent]>([])
        let allowance = ForeignWorkAllowance(seconds: 0.000_001, per: 600)
        let watcher = VaultWatcher(context: VaultContext(path: workspace.vaultPath, key: Workspace.key, limits: .standard, state: workspace.state, settings: DeviceSettings()),
                                   policy: Reconciler.Policy(), allowance: allowance) { event in events.withLock { $0.append(event) } }
        #expect(watcher.check())
        for index in 1...4 { try plantCopy(workspace, index: index) }
        #expect(watcher.check())
        #expect(events.withLock { $0.filter { $0.kind == .conflictCopyMerged }.count } == 4, "\(events.withLock { $0.map(\.kind) })")
        #expect(allowance.admits(at: Date()))
    }
}

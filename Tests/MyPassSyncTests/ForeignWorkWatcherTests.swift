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

    @Test("with the allowance spent by the first copy, the others wait, told once; once the window has room they are folded")
    func copiesWaitForRoom() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let events = Mutex<[WatchEvent]>([])
        // Any opening spends this allowance; the window is short so that the test sees it refill.
        let allowance = ForeignWorkAllowance(seconds: 0.000_001, per: 3)
        let watcher = VaultWatcher(context: VaultContext(path: workspace.vaultPath, key: Workspace.key, limits: .standard, state: workspace.state),
                                   policy: Reconciler.Policy(), allowance: allowance) { event in events.withLock { $0.append(event) } }
        #expect(watcher.check())
        for index in 1...4 { try plantCopy(workspace, index: index) }
        #expect(!watcher.check(), "copies put off: the check waits")
        let kinds = events.withLock { $0.map(\.kind) }
        #expect(kinds.filter { $0 == .conflictCopyMerged }.count == 1, "one copy opened within the allowance: \(kinds)")
        guard case .copiesWaiting(_, let waiting, let until)? = events.withLock({ $0.first { $0.kind == .copiesWaiting } }) else {
            Issue.record("not told: \(kinds)"); return
        }
        #expect(waiting.count == 3 && until > Date(), "\(waiting), \(until)")
        #expect(watcher.retryNotBefore.map { $0 > Date().addingTimeInterval(1) } == true, "retried before the window has room")
        #expect(!watcher.check())
        #expect(events.withLock { $0.filter { $0.kind == .copiesWaiting }.count } == 1, "told again while still waiting")
        // Once the window has room, one more copy is opened per opening that fits (here: one each time).
        var rounds = 0
        while events.withLock({ $0.filter { $0.kind == .conflictCopyMerged }.count }) < 4 && rounds < 12 {
            Thread.sleep(until: max(Date(), allowance.nextRoom(at: Date())).addingTimeInterval(0.05))
            _ = watcher.check()
            rounds += 1
        }
        let titles = try KDBXReader.open(try workspace.bytes(), key: Workspace.key).vault.root.entries.map(\.title)
        #expect((1...4).allSatisfy { titles.contains("Planted \($0)") }, "\(titles)")
        #expect(try workspace.strayFiles().filter { $0.contains("sync-conflict") }.isEmpty, "a copy was left")
    }
}

import Foundation
import Synchronization
import Testing
import KDBXFormat
import MyPassCrypto
import SyncCommit
import SyncWatch
import SyncState

/// The vault file is untrusted too: anyone who can write into the synced folder can raise its key
/// derivation without the password, or put a sparse file of gigabytes in its place. Once this device
/// has synced the vault, a file whose derivation costs other than that version's is held to the
/// budget for versions from elsewhere, and a file far larger than it is not read.
@Suite("Watcher: the vault file held to the budget once its header changed", .serialized)
struct VaultHeaderTrustTests {
    /// `file` (KDBX 4, AES-KDF) with its rounds set to `rounds` in the unauthenticated header, the
    /// header's SHA-256 recomputed (what someone with folder access can do without the password).
    static func raisingRounds(of file: Data, to rounds: UInt64) throws -> Data {
        var bytes = [UInt8](file)
        let marker: [UInt8] = [0x05, 0x01, 0, 0, 0, UInt8(ascii: "R"), 0x08, 0, 0, 0]
        let at = try #require((0..<(bytes.count - marker.count)).first { Array(bytes[$0..<$0 + marker.count]) == marker })
        withUnsafeBytes(of: rounds.littleEndian) { bytes.replaceSubrange(at + marker.count..<at + marker.count + 8, with: $0) }
        let end: [UInt8] = [0x00, 0x04, 0, 0, 0, 0x0D, 0x0A, 0x0D, 0x0A]
        let headerEnd = try #require((0..<(bytes.count - end.count)).first { Array(bytes[$0..<$0 + end.count]) == end }) + end.count
        bytes.replaceSubrange(headerEnd..<headerEnd + 32, with: [UInt8](SHA256.hash(Data(bytes[0..<headerEnd]))))
        return Data(bytes)
    }

    private func replaceVault(_ workspace: Workspace, with bytes: Data) throws {
        let incoming = workspace.directory.appendingPathComponent("incoming.kdbx")
        try bytes.write(to: incoming)
        #expect(rename(incoming.path, workspace.vaultPath) == 0)
    }

    @Test("a synced vault whose header is raised to 4 billion AES rounds (80 s here, within the caps for a vault opened by hand) is refused before any derivation, told once")
    func raisedDerivationRefused() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let events = RecordedEvents()
        let watcher = workspace.watcher(policy: .merge, copyPolicy: .merge, recording: events)
        #expect(watcher.check())
        let original = try workspace.bytes()
        try replaceVault(workspace, with: try Self.raisingRounds(of: original, to: UInt64(UInt32.max)))
        let started = Date()
        #expect(!watcher.check())
        #expect(!watcher.check(), "touched again")
        #expect(Date().timeIntervalSince(started) < 20, "the raised derivation ran (\(Date().timeIntervalSince(started)) s)")
        let refusals = events.all.filter { $0.kind == .unreadable }
        #expect(refusals.count == 1 && refusals.first?.detail.contains("far costlier") == true, "\(events.all.map(\.detail))")
        #expect(try workspace.bytes() != original, "the planted file was replaced")
        // The vault's own version back: watched as before.
        try replaceVault(workspace, with: original)
        #expect(watcher.check())
    }

    @Test("a derivation strengthened beyond the budget on purpose is accepted by opening the vault once on this device (what `ls` does): then watched as before")
    func strengthenedOnPurposeAccepted() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let events = RecordedEvents()
        let watcher = workspace.watcher(policy: .merge, copyPolicy: .merge, recording: events)
        #expect(watcher.check())
        // 80 million rounds: beyond the budget measured against 10 (60 million), about a second here.
        let strengthened = try KDBXWriter.serialize(try KDBXReader.open(try workspace.bytes(), key: Workspace.key).vault,
                                                    settings: FormatSettings(version: .v4_0, cipher: .chaCha20,
                                                                             kdf: .aesKDF(seed: Data(repeating: 5, count: 32), rounds: 80_000_000)),
                                                    key: Workspace.key).file
        try replaceVault(workspace, with: strengthened)
        #expect(!watcher.check())
        #expect(events.all.last?.detail.contains("`mypass-sync ls VAULT`") == true, "\(events.all.map(\.detail))")
        // The person opens it once with the vault's own limits: the version becomes this device's base.
        let unlocked = try VaultFile.read(workspace.vaultPath).unlock(try VaultCredentials(password: "sync-test"))
        unlocked.recordAsBase(in: workspace.state)
        #expect(watcher.check(), "still refused after it was accepted: \(events.all.last?.detail ?? "")")
    }

    @Test("a header changed within the budget is derived once: a touched or rewritten file with the same header is not derived again")
    func changedHeaderDerivedOnce() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let events = RecordedEvents()
        let watcher = workspace.watcher(policy: .merge, copyPolicy: .merge, recording: events)
        #expect(watcher.check())
        // 40 million rounds: within the budget (60 million), a noticeable derivation.
        try replaceVault(workspace, with: try Self.raisingRounds(of: try workspace.bytes(), to: 40_000_000))
        var started = Date()
        _ = watcher.check()
        let first = Date().timeIntervalSince(started)
        #expect(events.all.last?.kind == .keyChanged, "a changed header no longer opens with the key it was derived for")
        var later: [Double] = []
        for _ in 0..<3 {
            #expect(utimes(workspace.vaultPath, nil) == 0)
            started = Date()
            _ = watcher.check()
            later.append(Date().timeIntervalSince(started))
        }
        #expect(later.allSatisfy { $0 < first / 3 }, "derived again on a touch: first \(first) s, then \(later)")
    }

    @Test("a sparse file of 2 GiB in the vault's place is not read: one error, memory untouched")
    func sparseVaultNotRead() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let events = RecordedEvents()
        let watcher = workspace.watcher(policy: .merge, copyPolicy: .merge, recording: events)
        #expect(watcher.check())
        let sparse = workspace.directory.appendingPathComponent("sparse.kdbx")
        #expect(FileManager.default.createFile(atPath: sparse.path, contents: nil))
        #expect(truncate(sparse.path, 2 << 30) == 0)
        #expect(rename(sparse.path, workspace.vaultPath) == 0)
        #expect(!watcher.check())
        let errors = events.all.filter { $0.kind == .error }
        #expect(errors.count == 1 && errors.first?.detail.contains("far larger") == true, "\(events.all.map(\.detail))")
    }
}

import Foundation
import Synchronization
import Testing
import KDBXFormat
import MyPassCore
import MyPassCrypto
import SyncCommit
import SyncFiles
import SyncState
import SyncWatch

/// A person's decision (`daemon decide`, a notice's button, `resolve`) is about the version the
/// question named: a save swapped in since is neither reloaded, merged nor overwritten under it.
@Suite("Decisions: only the version asked about", .serialized)
struct DecisionVersionTests {
    /// The workspace's vault as another device saved it: `change` applied, written in place by rename.
    private func saveElsewhere(_ workspace: Workspace, at seconds: Int64, _ change: (Vault) throws -> Vault) throws -> String {
        let current = try KDBXReader.open(try workspace.bytes(), key: Workspace.key).vault
        let settings = FormatSettings(version: .v4_0, cipher: .chaCha20, kdf: .aesKDF(seed: Data(repeating: 2, count: 32), rounds: 10))
        let bytes = try KDBXWriter.serialize(try change(current), settings: settings, key: Workspace.key).file
        let incoming = workspace.directory.appendingPathComponent("incoming-\(seconds).kdbx")
        try bytes.write(to: incoming)
        #expect(rename(incoming.path, workspace.vaultPath) == 0)
        return SHA256.hexHash(bytes)
    }

    @Test("under the ask policy, a reload or merge decided about one version leaves a version swapped in since untouched and asks again")
    func swappedVersionIsAskedAbout() throws {
        for decision in [SyncSession.Decision.reload, .merge] {
            let workspace = try Workspace()
            defer { workspace.remove() }
            let path = DurableFile.canonicalPath(workspace.vaultPath, on: .real)
            let events = RecordedEvents()
            let watcher = workspace.watcher(policy: .ask, copyPolicy: .merge, recording: events)
            #expect(watcher.check())
            let base = try #require(workspace.state.base(for: path)).record.fingerprint.sha256
            let asked = try saveElsewhere(workspace, at: 100) { vault in
                try vault.addingEntry(title: "Asked about", password: "x", to: vault.root.uuid, at: Timestamp(unixSeconds: 1_800_000_100)).vault
            }
            _ = watcher.check()
            guard case .decisionNeeded(_, let version)? = events.all.last else { Issue.record("no question asked"); return }
            #expect(version == asked)
            // Another save, deleting the vault's entry, lands before the decision is carried out.
            let swapped = try saveElsewhere(workspace, at: 200) { vault in
                let first = try #require(vault.root.entries.first { $0.title == "First" })
                return try vault.deletingEntry(first.uuid, at: Timestamp(unixSeconds: 1_800_000_200))
            }
            let swappedBytes = try workspace.bytes()
            let credentials = try VaultCredentials(password: "sync-test")
            var settings = WatchEngine.Settings(device: DeviceSettings())
            settings.policy = .ask
            let seen = Mutex<[WatchEvent]>([])
            let answer = decideOnce(decision, at: path, about: asked, credentials: credentials, state: workspace.state, settings: settings) { event in
                seen.withLock { $0.append(event) }
            }
            guard case .failure(.changedSince) = answer else { Issue.record("\(decision): \(answer)"); return }
            #expect(try workspace.bytes() == swappedBytes, "\(decision): the vault was written")
            #expect(workspace.state.base(for: path)?.record.fingerprint.sha256 == base, "\(decision): the swapped version was taken in")
            #expect(seen.withLock { $0 }.contains { if case .decisionNeeded(_, swapped) = $0 { true } else { false } },
                    "\(decision): the version on disk now is not asked about")
            // Decided about the version on disk now, it is carried out.
            let outcome = try decideOnce(decision, at: path, about: swapped, credentials: credentials, state: workspace.state, settings: settings).get()
            #expect(outcome.summary.contains("taken") || outcome.summary.contains("merged"), "\(decision): \(outcome.summary)")
            #expect(workspace.state.base(for: path)?.record.fingerprint.sha256 != base)
        }
    }

    @Test("a check that stops to ask a person leaves no copy 'outstanding': the engine does not make it again every few seconds (one question, not one a re-check)")
    func questionIsNotRechecked() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let watcher = VaultWatcher(path: workspace.vaultPath, key: Workspace.key, state: workspace.state, limits: .standard, settings: DeviceSettings(), policy: .ask,
                                   copyPolicy: .merge) { _ in }
        #expect(watcher.check())
        _ = try saveElsewhere(workspace, at: 100) { vault in
            try vault.addingEntry(title: "Asked about", password: "x", to: vault.root.uuid, at: Timestamp(unixSeconds: 1_800_000_100)).vault
        }
        try workspace.bytes().write(to: workspace.directory.appendingPathComponent("vault.sync-conflict-20261204-101010-PHONE01.kdbx"))
        #expect(watcher.check())
        #expect(!watcher.copiesOutstanding, "a question would be asked again at every re-check")
    }
}

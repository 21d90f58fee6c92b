import Foundation
import KDBXFormat
import MyPassCore
@testable import MyPassSync
@testable import SyncCommit
@testable import SyncFiles
@testable import SyncRemote
@testable import SyncState
@testable import SyncWatch
import Testing

/// A conflict copy's arrival starts opening it (`VaultWatcher.prepare`); the check after the
/// debounce uses that open only if it was made from exactly the bytes the check reads.
@Suite("conflict copies opened during the debounce", .serialized)
struct CopyPrefetchTests {
    /// Renames into place a conflict copy `name` of the workspace's vault with one more entry,
    /// `title`, saved as another device would (its own KDF salt).
    private func placeCopy(_ workspace: Workspace, title: String, name: String) throws -> String {
        let opened = try KDBXReader.open(workspace.bytes(), key: Workspace.key)
        let edited = try opened.vault.addingEntry(title: title, to: opened.vault.root.uuid).vault
        var settings = opened.settings
        settings.kdf = .aesKDF(seed: Data((0..<32).map { _ in UInt8.random(in: 0...255) }), rounds: 10)
        let staging = workspace.directory.appendingPathComponent(".staging").path
        try KDBXWriter.serialize(edited, settings: settings, key: Workspace.key).file.write(to: URL(fileURLWithPath: staging))
        let path = workspace.directory.appendingPathComponent(name).path
        #expect(rename(staging, path) == 0)
        return path
    }

    /// The workspace's vault synced once on this device and a merging watcher that has checked it.
    private func watching(_ workspace: Workspace) throws -> (VaultWatcher, SyncSession) {
        let session = try SyncSession(path: workspace.vaultPath, key: Workspace.key, state: workspace.state, settings: DeviceSettings())
        session.update(try session.vault.addingEntry(title: "Synced", to: session.vault.root.uuid).vault)
        #expect(try session.saveMerging().wroteFile)
        let watcher = VaultWatcher(path: workspace.vaultPath, key: Workspace.key, state: workspace.state, limits: .standard, settings: DeviceSettings(),
                                   policy: .merge, copyPolicy: .merge) { _ in }
        #expect(watcher.check())
        return (watcher, session)
    }

    @Test("the check uses the copy opened ahead; a copy replaced after it was opened is opened again")
    func usedOnlyForTheSameBytes() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let (watcher, _) = try watching(workspace)

        let first = try placeCopy(workspace, title: "From the phone", name: "vault.sync-conflict-20261201-100000-PHONE.kdbx")
        watcher.prepare(copyAt: first)
        #expect(watcher.check())
        #expect(watcher.prefetch.hits == 1, "the copy opened ahead was used")
        #expect(try workspace.open().root.entries.map(\.title).contains("From the phone"))
        #expect(!FileManager.default.fileExists(atPath: first), "the merged copy left the folder")

        // Opened ahead, then replaced by another version before the check (Syncthing overwrites a
        // copy with a same-named one from another device): the replaced bytes are not taken for the
        // new ones, and the version opened ahead, which this device saw, is not lost either.
        let name = "vault.sync-conflict-20261201-100500-PHONE.kdbx"
        let second = try placeCopy(workspace, title: "Opened ahead", name: name)
        watcher.prepare(copyAt: second)
        watcher.prefetch.waitForOpens()
        _ = try placeCopy(workspace, title: "Replaced later", name: name)
        #expect(watcher.check())
        #expect(watcher.prefetch.hits == 1, "the open of the replaced bytes was not used")
        let titles = try workspace.open().root.entries.map(\.title)
        #expect(titles.contains("Replaced later") && titles.contains("Opened ahead"), "\(titles)")
        #expect(PendingVersions(state: workspace.state, vaultPath: workspace.vaultPath).list().isEmpty, "kept versions left after the merge")
    }

    @Test("a copy planted as a symlink is not opened ahead either, and the cache holds at most two copies")
    func sameCapsAsTheCheck() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let (watcher, session) = try watching(workspace)
        // A symlink under a copy's name, pointing at another file of the same database.
        let elsewhere = workspace.directory.appendingPathComponent("private.kdbx").path
        try FileManager.default.copyItem(atPath: workspace.vaultPath, toPath: elsewhere)
        let planted = workspace.directory.appendingPathComponent("vault.sync-conflict-20261201-110000-EVIL.kdbx").path
        try FileManager.default.createSymbolicLink(atPath: planted, withDestinationPath: elsewhere)
        watcher.prepare(copyAt: planted)
        watcher.prefetch.waitForOpens()
        #expect(watcher.prefetch.take(planted, matching: try DurableFile.read(atPath: elsewhere, on: .real).fingerprint,
                                      under: CopyFolding.copyOpening(forVaultAt: workspace.vaultPath, on: .real, vaultKDF: session.settings.kdf,
                                                                         key: Workspace.key, cachedKey: nil, limits: .standard),
                                      identity: DatabaseIdentity(session.vault)) == nil)
        try FileManager.default.removeItem(atPath: planted)
        // Three copies at once: two are opened ahead, the third waits for the check.
        let copies = try (0..<3).map { try placeCopy(workspace, title: "Copy \($0)", name: "vault.sync-conflict-20261201-12000\($0)-PHONE.kdbx") }
        for copy in copies { watcher.prepare(copyAt: copy) }
        watcher.prefetch.waitForOpens()
        #expect(watcher.check())
        #expect(watcher.prefetch.hits == 2)
        let titles = try workspace.open().root.entries.map(\.title)
        #expect(["Copy 0", "Copy 1", "Copy 2"].allSatisfy(titles.contains), "\(titles)")
    }

    @Test("a copy refused while it was opened ahead (other credentials) is not derived again by the check: its refusal is used")
    func refusalIsUsed() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let (watcher, _) = try watching(workspace)
        let opened = try KDBXReader.open(workspace.bytes(), key: Workspace.key)
        var settings = opened.settings
        settings.kdf = .aesKDF(seed: Data((0..<32).map { _ in UInt8.random(in: 0...255) }), rounds: 10)
        let otherKey = try CompositeKey(password: "another device's password")
        let copy = workspace.directory.appendingPathComponent("vault.sync-conflict-20261201-130000-OTHER.kdbx").path
        try KDBXWriter.serialize(opened.vault, settings: settings, key: otherKey).file.write(to: URL(fileURLWithPath: copy))
        watcher.prepare(copyAt: copy)
        watcher.prefetch.waitForOpens()
        _ = watcher.check()
        #expect(watcher.prefetch.hits == 1, "the check opened the refused copy again")
        #expect(FileManager.default.fileExists(atPath: copy), "a copy with other credentials stays")
    }
}

import Foundation
import Synchronization
import Testing
import KDBXFormat
import MyPassCore
import MyPassCrypto
import SyncCommit
import SyncState
import SyncWatch

/// The watcher's fold merges a conflict copy's cipher and KDF like any setting (MERGE.md rule 13):
/// a device that strengthened the vault while another edited it does not lose its choice when its
/// version arrives as a conflict copy (real files, real derivations).
@Suite("A stronger cipher and KDF chosen elsewhere survive the watcher's fold and a save that meets them", .serialized)
struct WatcherFormatMergeTests {
    @Test("a copy switched to ChaCha20 and Argon2id (its settings changed later) is folded: the vault is written in them, the edits of both kept")
    func strongerFormatSurvivesFold() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let events = RecordedEvents()
        let watcher = workspace.watcher(policy: .merge, copyPolicy: .merge, recording: events)
        #expect(watcher.check())
        let synced = try KDBXReader.open(try workspace.bytes(), key: Workspace.key)
        #expect(synced.settings.cipher != .chaCha20 || !synced.settings.kdf.isArgon2id, "the vault starts in another format")
        // The other device: an entry added and the vault converted, its settings changed after that.
        var strengthened = try synced.vault.addingEntry(title: "From the strong device", password: "s", to: synced.vault.root.uuid,
                                                        at: Timestamp(unixSeconds: 1_800_000_100)).vault
        strengthened.meta.settingsChanged = Timestamp(unixSeconds: 1_800_000_200)
        let argon2id = KDFParameters.argon2(.init(variant: .argon2id, salt: Data(repeating: 7, count: 32), iterations: 2, memoryBytes: 1 << 20,
                                                  parallelism: 1))
        let copySettings = FormatSettings(version: .v4_0, cipher: .chaCha20, kdf: argon2id, compression: .gzip)
        try KDBXWriter.serialize(strengthened, settings: copySettings, key: Workspace.key).file
            .write(to: workspace.directory.appendingPathComponent("vault.sync-conflict-20261204-101010-STRONG1.kdbx"))
        // This device: an edit of its own meanwhile, in the old format.
        let session = try SyncSession(path: workspace.vaultPath, key: Workspace.key, state: workspace.state, settings: DeviceSettings())
        session.update(try session.vault.addingEntry(title: "From this device", password: "t", to: session.vault.root.uuid,
                                                     at: Timestamp(unixSeconds: 1_800_000_150)).vault)
        _ = try session.save()
        _ = watcher.check()
        #expect(events.all.contains { $0.kind == .conflictCopyMerged }, "\(events.all.map(\.kind))")
        let merged = try KDBXReader.open(try workspace.bytes(), key: Workspace.key)
        #expect(merged.settings.cipher == .chaCha20 && merged.settings.kdf.isArgon2id, "the copy's format was dropped: \(merged.settings)")
        let titles = merged.vault.root.entries.map(\.title)
        #expect(titles.contains("From the strong device") && titles.contains("From this device"), "\(titles)")
    }
}

extension WatcherFormatMergeTests {
    @Test("a save meets another writer's version converted to Argon2id: the merged save keeps Argon2id, both edits kept")
    func strongerFormatSurvivesSaveMerge() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let session = try SyncSession(path: workspace.vaultPath, key: Workspace.key, state: workspace.state, settings: DeviceSettings())
        // Another program converts the vault and adds an entry while this session edits.
        let other = try KDBXReader.open(try workspace.bytes(), key: Workspace.key)
        var converted = try other.vault.addingEntry(title: "Written elsewhere", password: "o", to: other.vault.root.uuid,
                                                    at: Timestamp(unixSeconds: 1_800_000_100)).vault
        converted.meta.settingsChanged = Timestamp(unixSeconds: 1_800_000_200)
        let argon2id = KDFParameters.argon2(.init(variant: .argon2id, salt: Data(repeating: 9, count: 32), iterations: 2, memoryBytes: 1 << 20,
                                                  parallelism: 1))
        let incoming = workspace.directory.appendingPathComponent("incoming.kdbx")
        try KDBXWriter.serialize(converted, settings: FormatSettings(version: .v4_0, cipher: .chaCha20, kdf: argon2id, compression: .gzip),
                                 key: Workspace.key).file.write(to: incoming)
        #expect(rename(incoming.path, workspace.vaultPath) == 0)
        session.update(try session.vault.addingEntry(title: "Written here", password: "h", to: session.vault.root.uuid,
                                                     at: Timestamp(unixSeconds: 1_800_000_150)).vault)
        _ = try session.saveMerging()
        let merged = try KDBXReader.open(try workspace.bytes(), key: Workspace.key)
        #expect(merged.settings.kdf.isArgon2id, "the save wrote its older KDF over the stronger one: \(merged.settings.kdf)")
        let titles = merged.vault.root.entries.map(\.title)
        #expect(titles.contains("Written elsewhere") && titles.contains("Written here"), "\(titles)")
    }
}

private extension KDFParameters {
    var isArgon2id: Bool {
        if case .argon2(let settings) = self { return settings.variant == .argon2id }
        return false
    }
}

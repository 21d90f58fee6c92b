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

@Suite("Sync-conflict copies: names and folding")
struct ConflictCopyTests {
    @Test("each sync engine's conflict name is recognised for its vault, and nothing else", arguments: [
        ("vault.sync-conflict-20261129-101010-ABCDEF1.kdbx", ConflictCopies.Engine?.some(.syncthing)),
        ("vault (Alice's conflicted copy 2026-11-29).kdbx", .dropbox),
        ("vault (conflicted copy 2026-11-29 101010).kdbx", .nextcloud),
        ("vault-DESKTOP-1A2B3C4.kdbx", .onedrive),
        ("vault-LAPTOP-2.kdbx", .onedrive),
        ("vault-old.kdbx", nil),                          // lower case: a user's own file
        ("vault-2024.kdbx", nil),                         // digits only
        ("vault-A-VERY-LONG-COMPUTER-NAME.kdbx", nil),    // longer than a Windows computer name
        ("other.sync-conflict-20261129-101010-ABCDEF1.kdbx", nil),
        (".syncthing.vault.kdbx.tmp", nil),
        ("vault.kdbx.tmp", nil),
        ("vault.sync-conflict-20261129-101010-ABCDEF1.kdbx.bak", nil),
        // Each from its engine's documentation or as the engine was seen to write it here.
        ("vault.Conflict.kdbx", .resilio),
        ("vault.Conflict1.kdbx", .resilio),
        ("vault.Conflict 3.kdbx", .resilio),
        ("vault (SFConflict alice@example.org 2026-12-01-10-15-00).kdbx", .seafile),
        ("vault [conflicted].kdbx", .pcloud),
        ("vault.conflicted.kdbx", .pcloud),
        ("vault-laptop-safeBackup-0001.kdbx", .onedriveLinux),
        ("vault (1).kdbx", .googleDrive),
        ("vault (conflict_on_2026-12-01).kdbx", .unison),
        ("vault (conflict #1_on_2026-12-01).kdbx", .unison),
        ("vault.kdbx..path1", .rclone),
        ("vault.kdbx..path2", .rclone),
        ("vault.kdbx.path1", .rclone),
        ("vault.kdbx.conflict1", .rclone),
        ("vault.kdbx.conflict12", .rclone),
        ("vault.conflict2.kdbx", .rclone),                // --suffix-keep-extension
        ("vault.kdbx.conflict", nil),
        ("vault.kdbx.conflict0", nil),
        ("vault.kdbx.conflict-1", nil),
        ("vault.kdbx.cloud1", nil),                       // a suffix this device was not told about
        ("vault (copy).kdbx", nil),
        ("vault.Conflicts.kdbx", nil),
        ("vault.unison.tmp", nil),
    ])
    func names(name: String, engine: ConflictCopies.Engine?) throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        #expect(FileManager.default.createFile(atPath: workspace.directory.appendingPathComponent(name).path, contents: Data()))
        let found = ConflictCopies.find(for: workspace.vaultPath, on: .real)
        #expect(found.map(\.engine) == (engine.map { [$0] } ?? []))
    }

    @Test("every sync engine is one value: its names and temporaries are its own, its name round-trips through JSON, and no two engines claim a name")
    func engineValues() throws {
        let samples: [SyncEngine: String] = [
            .syncthing: "vault.sync-conflict-20261129-101010-ABCDEF1.kdbx", .nextcloud: "vault (conflicted copy 2026-11-29 101010).kdbx",
            .dropbox: "vault (Anna's conflicted copy 2026-11-29).kdbx", .onedrive: "vault-LAPTOP7.kdbx",
            .onedriveLinux: "vault-host-safeBackup-0001.kdbx", .resilio: "vault.Conflict2.kdbx", .seafile: "vault (SFConflict anna 2026-11-29).kdbx",
            .pcloud: "vault [conflicted].kdbx", .googleDrive: "vault (1).kdbx", .unison: "vault (conflict_on_2026-11-29).kdbx",
            .rclone: "vault.kdbx..path1",
        ]
        #expect(Set(SyncEngine.all) == Set(samples.keys), "an engine without a sample name here")
        #expect(Set(SyncEngine.all.map(\.name)).count == SyncEngine.all.count)
        for (engine, name) in samples {
            #expect(ConflictCopies.engine(ofName: name, forVaultNamed: "vault.kdbx") == engine, "\(name)")
            let json = try JSONEncoder().encode([engine])
            #expect(String(decoding: json, as: UTF8.self) == "[\"\(engine.name)\"]")
            #expect(try JSONDecoder().decode([SyncEngine].self, from: json) == [engine])
        }
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([SyncEngine].self, from: Data("[\"carrier-pigeon\"]".utf8)) }
        #expect(SyncEngine.all.filter(\.renamesBothVersions) == [.rclone])
        // Each engine's temporaries become the file they are named for; other names are no temporary.
        #expect(SyncTransfers.targetName(ofTemporary: ".syncthing.vault.kdbx.tmp") == "vault.kdbx")
        #expect(SyncTransfers.targetName(ofTemporary: "~syncthing~vault.kdbx.tmp") == "vault.kdbx")
        #expect(SyncTransfers.targetName(ofTemporary: ".vault.kdbx.~a1B2c3") == "vault.kdbx")
        #expect(SyncTransfers.targetName(ofTemporary: "vault.kdbx.0123abcd.partial") == "vault.kdbx")
        for name in ["vault.kdbx", ".syncthing..tmp", "vault.kdbx.0123abcg.partial", ".vault.kdbx.~", "vault.kdbx.tmp"] {
            #expect(SyncTransfers.targetName(ofTemporary: name) == nil, "\(name)")
        }
    }

    @Test("a configured rclone --conflict-suffix: S and SN after the extension or before it; the flag's forms parsed as rclone takes them", arguments: [
        ("vault.kdbx.cloud", true), ("vault.kdbx.cloud1", true), ("vault.kdbx.local3", true), ("vault.cloud1.kdbx", true),
        ("vault.local.kdbx", true), ("vault.kdbx.cloudy", false), ("vault.kdbx.cloud-1", false), ("vault.kdbx.Cloud1", false),
    ])
    func configuredSuffix(name: String, matches: Bool) throws {
        let naming = ConflictCopies.Naming(rcloneSuffixes: try #require(ConflictCopies.Naming.rcloneSuffixes(fromFlag: "cloud, local")))
        #expect((ConflictCopies.engine(ofName: name, forVaultNamed: "vault.kdbx", naming: naming) == .rclone) == matches)
        #expect(ConflictCopies.Naming.rcloneSuffixes(fromFlag: "a,b,c") == nil)
        #expect(ConflictCopies.Naming.rcloneSuffixes(fromFlag: "") == nil)
        #expect(ConflictCopies.Naming.rcloneSuffixes(fromFlag: "x/y") == nil)
        #expect(ConflictCopies.Naming.rcloneSuffixes(fromFlag: "mine") == ["mine"])
    }

    @Test("device settings: rcloneConflictSuffix becomes the copy naming; a value rclone would not take is refused, naming the key")
    func suffixSetting() throws {
        let settings = try JSONDecoder().decode(DeviceSettings.self, from: Data(#"{"rcloneConflictSuffix": "cloud,local"}"#.utf8))
        #expect(settings.copyNaming.rcloneSuffixes == ["cloud", "local"])
        #expect(try JSONDecoder().decode(DeviceSettings.self, from: Data("{}".utf8)).copyNaming == .standard)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(DeviceSettings.self, from: Data(#"{"rcloneConflictSuffix": "a,b,c"}"#.utf8)) }
    }

    @Test("a copy of another database (different root group) is left alone even with a conflict name")
    func otherDatabase() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        var stranger = Vault.empty(name: "another", at: Timestamp(unixSeconds: 1_800_000_000))
        stranger = try stranger.addingEntry(title: "Not ours", to: stranger.root.uuid).vault
        let settings = FormatSettings(version: .v4_0, cipher: .aes256, kdf: .aesKDF(seed: Data(repeating: 3, count: 32), rounds: 10))
        let copy = workspace.directory.appendingPathComponent("vault-DESKTOP-1A2B3C4.kdbx")
        try KDBXWriter.serialize(stranger, settings: settings, key: Workspace.key).file.write(to: copy)
        let session = try SyncSession(path: workspace.vaultPath, key: Workspace.key, state: workspace.state, settings: DeviceSettings())
        let folded = try CopyFolding.fold(ConflictCopies.find(for: workspace.vaultPath, on: .real), into: session, base: session.vault,
                                              key: Workspace.key, limits: .standard, dryRun: false)
        #expect(folded.outcomes.map(\.result) == [.otherDatabase])
        #expect(!folded.wroteVault)
        #expect(FileManager.default.fileExists(atPath: copy.path))
        #expect(try workspace.open().root.entries.map(\.title) == ["First"])
    }

    @Test("a copy removed between the listing and its reading (another device merged it) is gone: not unreadable, nothing written")
    func copyGoneBeforeRead() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let copy = workspace.directory.appendingPathComponent("vault.sync-conflict-20261203-101010-ABCDEFG.kdbx")
        try FileManager.default.copyItem(atPath: workspace.vaultPath, toPath: copy.path)
        let listed = ConflictCopies.find(for: workspace.vaultPath, on: .real)
        #expect(listed.count == 1)
        try FileManager.default.removeItem(at: copy)
        let before = try Data(contentsOf: URL(fileURLWithPath: workspace.vaultPath))
        let session = try SyncSession(path: workspace.vaultPath, key: Workspace.key, state: workspace.state, settings: DeviceSettings())
        let folded = try CopyFolding.fold(listed, into: session, base: session.vault, key: Workspace.key, limits: .standard, dryRun: false)
        #expect(folded.outcomes.map(\.result) == [.gone])
        #expect(!folded.wroteVault)
        #expect(try Data(contentsOf: URL(fileURLWithPath: workspace.vaultPath)) == before)
    }

    @Test("a copy that branched off before the vault's version: its older place and history are not taken as changes")
    func copyOlderThanBase() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let start = try workspace.open()
        let first = start.root.entries[0].uuid
        // This device's own older work (the copy): the entry edited. The vault now: that entry then
        // recycled and edited again elsewhere, the copy's version in its history.
        let copyVault = try start.updatingEntry(first, at: Timestamp(unixSeconds: 1_800_000_100)) { $0.setField("Notes", FieldValue("copy", isProtected: false)) }
        let current = try copyVault.updatingEntry(first, at: Timestamp(unixSeconds: 1_800_000_200)) { $0.setField("URL", FieldValue("https://later", isProtected: false)) }
            .deletingEntry(first, at: Timestamp(unixSeconds: 1_800_000_300))
        let settings = FormatSettings(version: .v4_0, cipher: .chaCha20, kdf: .aesKDF(seed: Data(repeating: 2, count: 32), rounds: 10))
        try KDBXWriter.serialize(current, settings: settings, key: Workspace.key).file.write(to: URL(fileURLWithPath: workspace.vaultPath))
        let copy = workspace.directory.appendingPathComponent("vault.sync-conflict-20261129-101010-PHONE.kdbx")
        try KDBXWriter.serialize(copyVault, settings: settings, key: Workspace.key).file.write(to: copy)
        let session = try SyncSession(path: workspace.vaultPath, key: Workspace.key, state: workspace.state, settings: DeviceSettings())
        _ = try CopyFolding.fold(ConflictCopies.find(for: workspace.vaultPath, on: .real), into: session, base: session.vault,
                                     key: Workspace.key, limits: .standard, dryRun: false)
        let merged = try workspace.open()
        let entry = try #require(merged.root.allEntries().first { $0.entry.uuid == first })
        #expect(entry.groupPath.last == "Recycle Bin", "the recycling was undone: \(entry.groupPath)")
        #expect(entry.entry.text("URL") == "https://later" && entry.entry.text("Notes") == "copy")
        #expect(entry.entry.history.map { $0.text("Notes") }.contains("copy"))
    }

    /// The entry's history is at its item limit (10): merging the copy's losing value into the
    /// history drops the oldest item, so the count stays the same; the value is new content all
    /// the same, and a merge that judged content by history counts would not write it (lost).
    @Test("a losing value that only the history keeps, in a history at its item limit, is written")
    func losingValueAtHistoryLimit() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        var vault = try workspace.open()
        let first = vault.root.entries[0].uuid
        for round in 1...12 {
            vault = try vault.updatingEntry(first, at: Timestamp(unixSeconds: 1_800_000_000 + Int64(round) * 10)) {
                $0.setField("URL", FieldValue("https://round-\(round)", isProtected: false))
            }
        }
        #expect(vault.root.entries[0].history.count == 10)
        let branch = vault
        let copyVault = try branch.updatingEntry(first, at: Timestamp(unixSeconds: 1_800_000_500)) {
            $0.setField("URL", FieldValue("https://the-copy", isProtected: false))
        }
        let current = try branch.updatingEntry(first, at: Timestamp(unixSeconds: 1_800_000_600)) {
            $0.setField("URL", FieldValue("https://the-vault", isProtected: false))
        }
        let settings = FormatSettings(version: .v4_0, cipher: .chaCha20, kdf: .aesKDF(seed: Data(repeating: 2, count: 32), rounds: 10))
        try KDBXWriter.serialize(current, settings: settings, key: Workspace.key).file.write(to: URL(fileURLWithPath: workspace.vaultPath))
        let copy = workspace.directory.appendingPathComponent("vault.sync-conflict-20261201-101010-ABCDEF1.kdbx")
        try KDBXWriter.serialize(copyVault, settings: settings, key: Workspace.key).file.write(to: copy)
        let session = try SyncSession(path: workspace.vaultPath, key: Workspace.key, state: workspace.state, settings: DeviceSettings())
        let folded = try CopyFolding.fold(ConflictCopies.find(for: workspace.vaultPath, on: .real), into: session, base: nil,
                                              key: Workspace.key, limits: .standard, dryRun: false)
        #expect(folded.outcomes.map(\.result) == [.merged] && folded.wroteVault)
        let entry = try workspace.open().root.entries[0]
        #expect(entry.text("URL") == "https://the-vault")
        #expect(entry.history.contains { $0.text("URL") == "https://the-copy" }, "the copy's value was lost")
        #expect(entry.history.count == 10)
    }
}

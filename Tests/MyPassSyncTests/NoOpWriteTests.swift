import Foundation
import KDBXFormat
import MyPassCore
import MyPassMerge
@testable import MyPassSync
@testable import SyncCommit
@testable import SyncFiles
@testable import SyncRemote
@testable import SyncState
@testable import SyncWatch
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A write that changes nothing is not made: to a sync engine every rewrite is a new version (new
/// seeds, new bytes), and two devices rewriting the same merge are a new conflict copy.
@Suite("no-op writes and retired copies")
struct NoOpWriteTests {
    /// Bytes, inode and modification time of the vault: what a rewrite changes.
    private func identity(_ workspace: Workspace) throws -> (Data, UInt64, Int) {
        var info = stat()
        #expect(stat(workspace.vaultPath, &info) == 0)
        return (try workspace.bytes(), UInt64(info.st_ino), info.st_mtim.tv_sec * 1_000_000_000 + info.st_mtim.tv_nsec)
    }

    private func write(_ vault: Vault, to path: String) throws {
        let settings = FormatSettings(version: .v4_0, cipher: .chaCha20, kdf: .aesKDF(seed: Data(repeating: 2, count: 32), rounds: 10))
        try KDBXWriter.serialize(vault, settings: settings, key: Workspace.key).file.write(to: URL(fileURLWithPath: path))
    }

    @Test("a save, a merge-save and every decision whose result is the content on disk leave the file untouched")
    func saveUnchanged() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let before = try identity(workspace)
        let session = try SyncSession(path: workspace.vaultPath, key: Workspace.key, state: workspace.state, settings: DeviceSettings())
        guard case .unchanged = try session.save() else { Issue.record("a save without an edit wrote the file"); return }
        // An edit that sets a field to the value it has is no edit.
        let first = session.vault.root.entries[0].uuid
        session.update(try session.vault.updatingEntry(first) { $0.setField("Title", FieldValue("First", isProtected: false)) })
        #expect(try session.saveMerging().wroteFile == false)
        // A session resumed from a working copy equal to the file also writes nothing.
        let resumed = try SyncSession(path: workspace.vaultPath, working: session.opened, key: Workspace.key, state: workspace.state, settings: DeviceSettings())
        #expect(try resumed.saveMerging().wroteFile == false)
        let (bytes, inode, modified) = try identity(workspace)
        #expect(bytes == before.0 && inode == before.1 && modified == before.2)
        // And a real edit still writes.
        session.update(try session.vault.updatingEntry(first) { $0.setField("Notes", FieldValue("changed", isProtected: false)) })
        #expect(try session.saveMerging().wroteFile == true)
        #expect(try workspace.bytes() != bytes)
    }

    @Test("a changed file whose content the merge already holds: the merge decision writes nothing")
    func mergeDecisionUnchanged() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let session = try SyncSession(path: workspace.vaultPath, key: Workspace.key, state: workspace.state, settings: DeviceSettings())
        // Another program rewrote the file with the same content under a new KDF salt (as KeePassXC
        // does on every save): new bytes, nothing new.
        let resaved = FormatSettings(version: .v4_0, cipher: .chaCha20, kdf: .aesKDF(seed: Data(repeating: 9, count: 32), rounds: 10))
        try KDBXWriter.serialize(session.vault, settings: resaved, key: Workspace.key).file.write(to: URL(fileURLWithPath: workspace.vaultPath))
        let rewritten = try identity(workspace)
        guard let conflict = try session.diskChange() else { Issue.record("the rewrite was not seen"); return }
        let resolution = try session.resolve(conflict, by: .merge)
        #expect(!resolution.wroteFile && resolution.changes.isEmpty)
        let after = try identity(workspace)
        #expect(after.0 == rewritten.0 && after.1 == rewritten.1 && after.2 == rewritten.2)
    }

    @Test("two devices merging the same copy reach the same content; the copy of their two rewrites carries nothing new")
    func echoOfOneMerge() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let start = try workspace.open()
        let first = start.root.entries[0].uuid
        // Device A edited the notes, device B the URL, at once: the vault holds B's, the copy A's.
        let mine = try start.updatingEntry(first, at: Timestamp(unixSeconds: 1_800_000_100)) { $0.setField("Notes", FieldValue("A", isProtected: false)) }
        let theirs = try start.updatingEntry(first, at: Timestamp(unixSeconds: 1_800_000_200)) { $0.setField("URL", FieldValue("B", isProtected: false)) }
        var merged: [Data] = []
        for device in ["a", "b"] {
            let folder = workspace.directory.appendingPathComponent(device)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let path = folder.appendingPathComponent("vault.kdbx").path
            try write(theirs, to: path)
            try write(mine, to: folder.appendingPathComponent("vault.sync-conflict-20261130-101010-AAAAAAA.kdbx").path)
            let state = SyncStateStore(directory: folder.appendingPathComponent("state").path)
            let session = try SyncSession(path: path, key: Workspace.key, state: state, settings: DeviceSettings())
            let folded = try CopyFolding.fold(ConflictCopies.find(for: path, on: .real), into: session, base: nil, key: Workspace.key,
                                                  limits: .standard, dryRun: false)
            #expect(folded.wroteVault && folded.outcomes.map(\.result) == [.merged])
            merged.append(try Data(contentsOf: URL(fileURLWithPath: path)))
        }
        #expect(merged[0] != merged[1], "two saves of one merge differ in bytes (seeds)")
        let contents = try merged.map { try KDBXReader.open($0, key: Workspace.key).vault }
        #expect(contents[0] == contents[1], "the two devices merged the same copy to different content")
        // The sync engine sees two versions and keeps one as a copy: it carries nothing new.
        let folder = workspace.directory.appendingPathComponent("a")
        let path = folder.appendingPathComponent("vault.kdbx").path
        try merged[1].write(to: URL(fileURLWithPath: folder.appendingPathComponent("vault.sync-conflict-20261130-101020-BBBBBBB.kdbx").path))
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let state = SyncStateStore(directory: folder.appendingPathComponent("state").path)
        let session = try SyncSession(path: path, key: Workspace.key, state: state, settings: DeviceSettings())
        let folded = try CopyFolding.fold(ConflictCopies.find(for: path, on: .real), into: session, base: session.vault, key: Workspace.key,
                                              limits: .standard, dryRun: false)
        #expect(!folded.wroteVault && folded.outcomes.map(\.result) == [.nothingNew])
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        #expect(ConflictCopies.find(for: path, on: .real).isEmpty)
        // Both copies are kept on this device, outside the folder, 0600 in a 0700 folder.
        let retired = RetiredCopies(state: state, vaultPath: path)
        #expect(Set(retired.list().map(\.originalName))
            == ["vault.sync-conflict-20261130-101010-AAAAAAA.kdbx", "vault.sync-conflict-20261130-101020-BBBBBBB.kdbx"])
        var info = stat()
        #expect(stat(retired.folder, &info) == 0 && info.st_mode & 0o777 == 0o700)
        for copy in retired.list() {
            #expect(stat(copy.path, &info) == 0 && info.st_mode & 0o777 == 0o600)
            #expect(!copy.path.hasPrefix(folder.path + "/vault"))
        }
    }

    @Test("retired copies are bounded: the newest ones up to the count, none older than the retention")
    func retention() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let retired = RetiredCopies(state: workspace.state, vaultPath: workspace.vaultPath)
        let now = Date()
        _ = try retired.store(Data("old".utf8), originalName: "vault.sync-conflict-old.kdbx",
                             at: now.addingTimeInterval(-RetiredCopies.maximumAge - 10))
        for index in 0..<(RetiredCopies.maximumCount + 5) {
            _ = try retired.store(Data("\(index)".utf8), originalName: "vault.sync-conflict-\(index).kdbx", at: now.addingTimeInterval(Double(index)))
        }
        let kept = retired.list()
        #expect(kept.count == RetiredCopies.maximumCount)
        #expect(!kept.contains { $0.originalName == "vault.sync-conflict-old.kdbx" })
        #expect(kept.first?.originalName == "vault.sync-conflict-\(RetiredCopies.maximumCount + 4).kdbx")
        #expect(!kept.contains { $0.originalName == "vault.sync-conflict-4.kdbx" })
    }

    @Test("sync engines' temporary names: which file they become, and only fresh ones count as a transfer in progress",
          arguments: [
              (".syncthing.vault.kdbx.tmp", "vault.kdbx"),
              ("~syncthing~vault.sync-conflict-20261130-101010-ABCDEFG.kdbx.tmp", "vault.sync-conflict-20261130-101010-ABCDEFG.kdbx"),
              (".vault.kdbx.~7daada06", "vault.kdbx"),
              ("vault.kdbx.2eb5b7f7.partial", "vault.kdbx"),               // rclone 1.75, as seen here
              ("vault.kdbx..path1.0a1b2c3d.partial", "vault.kdbx..path1"),
              ("vault.kdbx.2eb5b7f.partial", nil),
              ("vault.kdbx.2eb5b7fz.partial", nil),
              ("vault.kdbx", nil),
              (".syncthing..tmp", nil),
              (".vault.kdbx.~", nil),
          ] as [(String, String?)])
    func temporaryNames(name: String, target: String?) throws {
        #expect(SyncTransfers.targetName(ofTemporary: name) == target)
        let workspace = try Workspace()
        defer { workspace.remove() }
        let path = workspace.directory.appendingPathComponent(name).path
        #expect(FileManager.default.createFile(atPath: path, contents: Data("partial".utf8)))
        #expect(SyncTransfers.inProgress(for: workspace.vaultPath, on: .real) == (target == nil ? [] : [name]))
        // Untouched for longer than the stale limit: an interrupted transfer, not one in progress.
        #expect(SyncTransfers.inProgress(for: workspace.vaultPath, on: .real, now: Date().addingTimeInterval(SyncTransfers.staleAfter + 1)).isEmpty)
    }
}

@Suite("KDF salt rotation on save")
struct SaltRotationTests {
    private func salt(_ workspace: Workspace) throws -> Data { try KDBXReader.header(of: workspace.bytes()).kdf.salt }

    @Test("every save draws a new KDF salt; off, the file's salt is kept; a no-op save changes nothing")
    func rotation() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let first = try salt(workspace)
        let session = try SyncSession(path: workspace.vaultPath, key: Workspace.key, state: workspace.state, settings: DeviceSettings())
        session.update(try session.vault.addingEntry(title: "Rotated", to: session.vault.root.uuid).vault)
        #expect(try session.saveMerging().wroteFile)
        let second = try salt(workspace)
        #expect(second != first && second.count == first.count)
        #expect(try session.saveMerging().wroteFile == false)
        #expect(try salt(workspace) == second)
        // A session whose device keeps the salt.
        var keepSalt = DeviceSettings()
        keepSalt.rotateKDFSalt = false
        let keeping = try SyncSession(path: workspace.vaultPath, key: Workspace.key, state: workspace.state, settings: keepSalt)
        keeping.update(try keeping.vault.addingEntry(title: "Kept", to: keeping.vault.root.uuid).vault)
        #expect(try keeping.saveMerging().wroteFile)
        #expect(try salt(workspace) == second)
        // Whatever the salt, the file opens with the same credentials.
        #expect(try workspace.open().root.entries.map(\.title) == ["First", "Rotated", "Kept"])
    }
}

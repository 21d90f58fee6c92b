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
#if canImport(Glibc)
import Glibc
#endif

/// A synced folder `synced/` holding the vault in a subfolder `pw/`, and a folder `outside/` with
/// files of the user's that no operation on the vault may touch. Someone who can write into
/// `synced/` swaps `pw/` for a symlink to `outside/` in the middle of an operation.
private struct SwappedFolder {
    let workspace: Workspace
    let folder: String
    let vaultPath: String
    let outside: String
    /// Where `pw/` is after the swap.
    let moved: String
    /// The user's own files in `outside/`, by name.
    let precious: [String: Data]

    init(outsideNames: [String]) throws {
        workspace = try Workspace()
        let synced = workspace.directory.appendingPathComponent("synced").path
        folder = synced + "/pw"
        moved = synced + "/pw-moved"
        outside = workspace.directory.appendingPathComponent("outside").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        vaultPath = folder + "/vault.kdbx"
        try FileManager.default.moveItem(atPath: workspace.vaultPath, toPath: vaultPath)
        var precious: [String: Data] = [:]
        for name in outsideNames {
            let bytes = Data("the user's own \(name), not a vault".utf8)
            try bytes.write(to: URL(fileURLWithPath: outside + "/" + name))
            precious[name] = bytes
        }
        self.precious = precious
    }

    /// Moves `pw/` aside and puts a symlink to `outside/` under its name.
    func swap() {
        _ = rename(folder, moved)
        _ = symlink(outside, folder)
    }

    /// The names in `outside/` and whether each still holds the user's bytes.
    func outsideIsUntouched() throws -> Bool {
        let names = try FileManager.default.contentsOfDirectory(atPath: outside)
        return Set(names) == Set(precious.keys)
            && precious.allSatisfy { name, bytes in (try? Data(contentsOf: URL(fileURLWithPath: outside + "/" + name))) == bytes }
    }

    func openMoved() throws -> Vault {
        try KDBXReader.open(Data(contentsOf: URL(fileURLWithPath: moved + "/vault.kdbx")), key: Workspace.key).vault
    }
}

@Suite("A folder swapped for a symlink in the middle of an operation", .serialized)
struct FolderSwapTests {
    @Test("a save stays in the directory it opened: the vault lands there and nothing reaches the symlink's target")
    func saveStaysInItsDirectory() throws {
        let swapped = try SwappedFolder(outsideNames: ["vault.kdbx", "notes.txt"])
        defer { swapped.workspace.remove() }
        let files = FileSystem.faultInjecting()
        let session = try SyncSession(path: swapped.vaultPath, key: Workspace.key, state: swapped.workspace.state(on: files), settings: DeviceSettings())
        files.beforeNextSwap(of: swapped.vaultPath) { swapped.swap() }
        session.update(try session.vault.addingEntry(title: "Mine", to: session.vault.root.uuid).vault)
        let save = try session.saveMerging()
        #expect(save.wroteFile)
        #expect(try swapped.outsideIsUntouched(), "a file outside the synced folder was written or removed")
        #expect(Set(try swapped.openMoved().root.entries.map(\.title)) == ["First", "Mine"])
        let left = try FileManager.default.contentsOfDirectory(atPath: swapped.moved)
        #expect(left == ["vault.kdbx"], "temp files left: \(left)")
    }

    @Test("folding a copy: the copy is read and removed in the directory that was opened, a file of its name outside is kept")
    func foldStaysInItsDirectory() throws {
        let copyName = "vault.sync-conflict-20261130-101010-ABCDEF1.kdbx"
        let swapped = try SwappedFolder(outsideNames: [copyName, "vault.kdbx"])
        defer { swapped.workspace.remove() }
        let files = FileSystem.faultInjecting()
        let session = try SyncSession(path: swapped.vaultPath, key: Workspace.key, state: swapped.workspace.state(on: files), settings: DeviceSettings())
        let theirs = try session.vault.addingEntry(title: "From the other device", to: session.vault.root.uuid).vault
        let settings = FormatSettings(version: .v4_0, cipher: .chaCha20, kdf: .aesKDF(seed: Data(repeating: 7, count: 32), rounds: 10))
        try KDBXWriter.serialize(theirs, settings: settings, key: Workspace.key).file.write(to: URL(fileURLWithPath: swapped.folder + "/" + copyName))
        let copies = ConflictCopies.find(for: swapped.vaultPath, on: .real)
        #expect(copies.map(\.name) == [copyName])
        files.beforeNextSwap(of: swapped.vaultPath) { swapped.swap() }
        let report = try CopyFolding.fold(copies, into: session, base: session.vault, key: Workspace.key, limits: .standard, dryRun: false)
        #expect(report.outcomes.map(\.result) == [.merged])
        #expect(try swapped.outsideIsUntouched(), "a file outside the synced folder was written or removed")
        #expect(Set(try swapped.openMoved().root.entries.map(\.title)) == ["First", "From the other device"])
        #expect(!FileManager.default.fileExists(atPath: swapped.moved + "/" + copyName), "the merged copy stayed in the folder")
    }

    @Test("a name is one path component: a name with a slash or .. is refused, never resolved")
    func namesAreSingleComponents() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let directory = try DirectoryHandle(opening: workspace.directory.path, on: .real)
        for name in ["../vault.kdbx", "state/x", "..", ".", ""] {
            #expect(throws: FileError.self) { _ = try directory.read(name) }
            #expect(directory.status(of: name) == nil)
        }
        #expect(try directory.read("vault.kdbx").bytes == workspace.bytes())
    }

    @Test("a state directory that is a symlink is refused; a missing one is created 0700 with its parents")
    func privateDirectories() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let target = workspace.directory.appendingPathComponent("elsewhere").path
        try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
        let linked = workspace.directory.appendingPathComponent("linked").path
        #expect(symlink(target, linked) == 0)
        #expect(throws: FileError.self) { _ = try DirectoryHandle.privateDirectory(linked, on: .real) }
        let fresh = workspace.directory.appendingPathComponent("a/b/c").path
        let opened = try DirectoryHandle.privateDirectory(fresh, on: .real)
        #expect(opened.path == fresh)
        for path in ["a", "a/b", "a/b/c"] {
            var status = stat()
            #expect(lstat(workspace.directory.appendingPathComponent(path).path, &status) == 0)
            #expect(status.st_mode & 0o777 == 0o700, "\(path): \(String(status.st_mode & 0o777, radix: 8))")
        }
    }
}

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

/// A scratch directory with a small vault in it.
struct Workspace {
    let directory: URL
    let vaultPath: String
    let state: SyncStateStore
    static let key = try! CompositeKey(password: "sync-test")

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("mypass-sync-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        vaultPath = directory.appendingPathComponent("vault.kdbx").path
        state = SyncStateStore(directory: directory.appendingPathComponent("state").path)
        var vault = Vault.empty(name: "sync", at: Timestamp(unixSeconds: 1_800_000_000))
        vault = try vault.addingEntry(title: "First", password: "one", to: vault.root.uuid, at: Timestamp(unixSeconds: 1_800_000_000)).vault
        let settings = FormatSettings(version: .v4_0, cipher: .chaCha20, kdf: .aesKDF(seed: Data(repeating: 2, count: 32), rounds: 10))
        try KDBXWriter.serialize(vault, settings: settings, key: Self.key).file.write(to: URL(fileURLWithPath: vaultPath))
    }

    func remove() { try? FileManager.default.removeItem(at: directory) }

    /// This workspace's state, on `fileSystem` (a test's fake).
    func state(on fileSystem: FileSystem) -> SyncStateStore { SyncStateStore(directory: state.directory, on: fileSystem) }

    /// Files in the vault's directory other than the vault (temp files left behind).
    func strayFiles() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0 != "vault.kdbx" && $0 != "state" }
    }

    func bytes() throws -> Data { try Data(contentsOf: URL(fileURLWithPath: vaultPath)) }

    /// A session that added "Mine" while another device (its own state) saved an entry `theirs`
    /// first: the session's save is a conflict.
    func conflictingSession(theirs: String) throws -> (SyncSession, SyncSession.Conflict, theirBytes: Data) {
        let session = try SyncSession(path: vaultPath, key: Self.key, state: state, settings: DeviceSettings())
        let other = try SyncSession(path: vaultPath, key: Self.key, state: SyncStateStore(directory: directory.appendingPathComponent("other-state").path), settings: DeviceSettings())
        other.update(try other.vault.addingEntry(title: theirs, to: other.vault.root.uuid).vault)
        _ = try other.save()
        let theirBytes = try bytes()
        session.update(try session.vault.addingEntry(title: "Mine", to: session.vault.root.uuid).vault)
        guard case .conflict(let conflict) = try session.save() else { throw SaveError.verificationFailed("expected a conflict") }
        return (session, conflict, theirBytes)
    }

    func open() throws -> Vault { try KDBXReader.open(bytes(), key: Self.key).vault }
}

@Suite("Durable compare-and-swap saves", .serialized)
struct DurableSaveTests {
    @Test("a save replaces the vault, writes it 0600 whatever mode it had, and records the new base")
    func save() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        chmod(workspace.vaultPath, 0o640)
        let session = try SyncSession(path: workspace.vaultPath, key: Workspace.key, state: workspace.state, settings: DeviceSettings())
        session.update(try session.vault.addingEntry(title: "Second", to: session.vault.root.uuid).vault)
        guard case .saved(let fingerprint) = try session.save() else { Issue.record("expected a save"); return }
        #expect(try workspace.open().root.entries.map(\.title) == ["First", "Second"])
        let attributes = try FileManager.default.attributesOfItem(atPath: workspace.vaultPath)
        #expect(attributes[.posixPermissions] as? Int == 0o600)
        #expect(workspace.state.base(for: workspace.vaultPath)?.record.fingerprint == fingerprint)
        #expect(try workspace.strayFiles().isEmpty)
    }

    static let faults: [(SystemCalls.Operation, Int32)] = [
        (.open, ENOSPC), (.open, EACCES), (.write, ENOSPC), (.write, EIO), (.fsync, EIO), (.close, EIO), (.rename, EIO),
    ]

    @Test("a failing system call at any step leaves the original byte for byte and no temp file", arguments: faults)
    func faultInjection(operation: SystemCalls.Operation, errorNumber: Int32) throws {
        for occurrence in 1...3 {
            let workspace = try Workspace()
            defer { workspace.remove() }
            let original = try workspace.bytes()
            let files = FileSystem.faultInjecting()
            let session = try SyncSession(path: workspace.vaultPath, key: Workspace.key, state: workspace.state(on: files), settings: DeviceSettings())
            session.update(try session.vault.addingEntry(title: "Never", to: session.vault.root.uuid).vault)
            // fsync fails twice in a row for the retry with a fresh temp file to be exhausted too.
            var faults = [SystemCalls.Fault(operation, occurrence: occurrence, errorNumber: errorNumber)]
            if operation == .fsync { faults.append(SystemCalls.Fault(.fsync, occurrence: occurrence + 1, errorNumber: errorNumber)) }
            files.plan(faults)
            let result = Result { try session.save() }
            files.plan([])
            switch result {
            case .failure(let error as SaveError):
                guard case .file = error else { Issue.record("unexpected \(error)"); continue }
                #expect(try workspace.bytes() == original, "\(operation) #\(occurrence): original changed")
            case .failure(let error):
                Issue.record("unexpected \(error)")
            case .success:
                // The fault hit a later call (the sync-state record after the vault was replaced, or a
                // call this save makes fewer times): the vault holds the new version, whole.
                #expect(try workspace.open().root.entries.count == 2)
            }
            #expect(try workspace.strayFiles().isEmpty, "\(operation) #\(occurrence): temp file left")
        }
    }

    @Test("a failed fsync is retried once with a fresh temp file, and the save succeeds")
    func fsyncRetry() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let files = FileSystem.faultInjecting()
        let session = try SyncSession(path: workspace.vaultPath, key: Workspace.key, state: workspace.state(on: files), settings: DeviceSettings())
        session.update(try session.vault.addingEntry(title: "After retry", to: session.vault.root.uuid).vault)
        files.plan([SystemCalls.Fault(.fsync, occurrence: 1, errorNumber: EIO)])
        guard case .saved = try session.save() else { Issue.record("expected a save"); return }
        #expect(try workspace.open().root.entries.count == 2)
        #expect(try workspace.strayFiles().isEmpty)
    }

    @Test("short writes and EINTR are absorbed: the save completes with the right bytes")
    func shortWrites() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let files = FileSystem.faultInjecting()
        let session = try SyncSession(path: workspace.vaultPath, key: Workspace.key, state: workspace.state(on: files), settings: DeviceSettings())
        session.update(try session.vault.addingEntry(title: "Short", to: session.vault.root.uuid).vault)
        files.plan([SystemCalls.Fault(.write, occurrence: 1, shortWrite: true), SystemCalls.Fault(.write, occurrence: 2, errorNumber: EINTR)])
        guard case .saved = try session.save() else { Issue.record("expected a save"); return }
        #expect(try workspace.open().root.entries.map(\.title) == ["First", "Short"])
    }

    @Test("another writer got there first: the save becomes a conflict and writes nothing")
    func compareAndSwap() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        // Another program (another device's sync) replaces the file meanwhile.
        let (session, conflict, theirs) = try workspace.conflictingSession(theirs: "From elsewhere")
        #expect(try workspace.bytes() == theirs)
        let resolution = try session.resolve(conflict, by: .merge)
        #expect(resolution.changes.contains { $0.kind == .added })
        #expect(Set(try workspace.open().root.entries.map(\.title)) == ["First", "From elsewhere", "Mine"])
    }

    @Test("reload takes the disk version and keeps the working copy as a 0600 backup outside the synced folder")
    func reload() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let (session, conflict, _) = try workspace.conflictingSession(theirs: "Theirs")
        let resolution = try session.resolve(conflict, by: .reload)
        #expect(session.vault.root.entries.map(\.title) == ["First", "Theirs"])
        let backup = try #require(resolution.backup)
        #expect(backup.hasPrefix(workspace.state.directory))
        #expect(try FileManager.default.attributesOfItem(atPath: backup)[.posixPermissions] as? Int == 0o600)
        #expect(try KDBXReader.open(Data(contentsOf: URL(fileURLWithPath: backup)), key: Workspace.key).vault.root.entries.map(\.title) == ["First", "Mine"])
    }

    @Test("overwrite writes the working copy and keeps the disk version as a backup")
    func overwrite() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let (session, conflict, _) = try workspace.conflictingSession(theirs: "Theirs")
        let resolution = try session.resolve(conflict, by: .overwrite)
        #expect(try workspace.open().root.entries.map(\.title) == ["First", "Mine"])
        let backup = try #require(resolution.backup)
        #expect(try KDBXReader.open(Data(contentsOf: URL(fileURLWithPath: backup)), key: Workspace.key).vault.root.entries.map(\.title) == ["First", "Theirs"])
    }

    @Test("a symlinked vault is written through to its target; new files are 0600")
    func symlink() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let link = workspace.directory.appendingPathComponent("link.kdbx").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: workspace.vaultPath)
        let session = try SyncSession(path: link, key: Workspace.key, state: workspace.state, settings: DeviceSettings())
        session.update(try session.vault.addingEntry(title: "Via link", to: session.vault.root.uuid).vault)
        _ = try session.save()
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == workspace.vaultPath)
        #expect(try workspace.open().root.entries.count == 2)
        let fresh = workspace.directory.appendingPathComponent("new.kdbx").path
        try AtomicFileWriter.write(Data("x".utf8), toPath: fresh, on: .real)
        #expect(try FileManager.default.attributesOfItem(atPath: fresh)[.posixPermissions] as? Int == 0o600)
    }

    @Test("two vaults with the same name in different folders keep separate sync state")
    func separateState() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let otherFolder = workspace.directory.appendingPathComponent("other")
        try FileManager.default.createDirectory(at: otherFolder, withIntermediateDirectories: true)
        let twin = otherFolder.appendingPathComponent("vault.kdbx").path
        try FileManager.default.copyItem(atPath: workspace.vaultPath, toPath: twin)
        _ = try SyncSession(path: workspace.vaultPath, key: Workspace.key, state: workspace.state, settings: DeviceSettings())
        let second = try SyncSession(path: twin, key: Workspace.key, state: workspace.state, settings: DeviceSettings())
        second.update(try second.vault.addingEntry(title: "Only in twin", to: second.vault.root.uuid).vault)
        _ = try second.save()
        #expect(workspace.state.base(for: workspace.vaultPath)?.record.fingerprint != workspace.state.base(for: twin)?.record.fingerprint)
        let stateFiles = try FileManager.default.contentsOfDirectory(atPath: workspace.state.directory)
        #expect(stateFiles.filter { $0.hasSuffix(".base.kdbx") }.count == 2)
        #expect(SeenVaultFiles(state: workspace.state, vaultPath: twin).list().count == 1)
        #expect(SeenVaultFiles(state: workspace.state, vaultPath: workspace.vaultPath).list().isEmpty)
        var status = stat()
        stat(workspace.state.directory, &status)
        #expect(status.st_mode & 0o777 == 0o700)
    }

    @Test("a merge-and-save gives up after the bounded retries with changedOnDisk, having written nothing of its own")
    func boundedRetries() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let session = try SyncSession(path: workspace.vaultPath, key: Workspace.key, state: workspace.state, settings: DeviceSettings())
        let otherState = SyncStateStore(directory: workspace.directory.appendingPathComponent("other").path)
        var round = 0
        // Another writer replaces the file just before each of our replace attempts.
        session.beforeReplace = {
            round += 1
            guard let other = try? SyncSession(path: workspace.vaultPath, key: Workspace.key, state: otherState, settings: DeviceSettings()) else { return }
            other.update((try? other.vault.addingEntry(title: "Other \(round)", to: other.vault.root.uuid).vault) ?? other.vault)
            _ = try? other.save()
        }
        session.update(try session.vault.addingEntry(title: "Mine", to: session.vault.root.uuid).vault)
        #expect {
            _ = try session.saveMerging()
        } throws: { error in
            guard case SaveError.changedOnDisk = error else { return false }
            return true
        }
        #expect(round == SyncSession.maximumAttempts + 1)
        #expect(!(try workspace.open().root.entries.map(\.title)).contains("Mine"))
    }

    @Test("device settings turn backups on; a malformed settings file is an error, not a guess")
    func settings() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let config = workspace.directory.appendingPathComponent("config/mypass-sync")
        try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
        setenv("XDG_CONFIG_HOME", workspace.directory.appendingPathComponent("config").path, 1)
        defer { unsetenv("XDG_CONFIG_HOME") }
        #expect(try DeviceSettings.load() == DeviceSettings())
        try Data("{\"backups\": true}".utf8).write(to: config.appendingPathComponent("config.json"))
        #expect(try DeviceSettings.load().backups)
        try Data("backups=yes".utf8).write(to: config.appendingPathComponent("config.json"))
        #expect(throws: FileError.self) { try DeviceSettings.load() }
    }
}

@Suite("compare-and-swap without a window", .serialized)
struct SwapWindowTests {
    @Test("a version that lands between the check and the swap is swapped back, detected and merged, never overwritten")
    func landsInTheWindow() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let files = FileSystem.faultInjecting()
        let session = try SyncSession(path: workspace.vaultPath, key: Workspace.key, state: workspace.state(on: files), settings: DeviceSettings())
        // Another program's version, ready to land by rename at the worst moment.
        let theirs = try session.vault.addingEntry(title: "Landed in the window", to: session.vault.root.uuid).vault
        let settings = FormatSettings(version: .v4_0, cipher: .chaCha20, kdf: .aesKDF(seed: Data(repeating: 5, count: 32), rounds: 10))
        let staged = workspace.directory.appendingPathComponent("staged.kdbx").path
        try KDBXWriter.serialize(theirs, settings: settings, key: Workspace.key).file.write(to: URL(fileURLWithPath: staged))
        files.beforeNextSwap(of: workspace.vaultPath) { _ = rename(staged, workspace.vaultPath) }
        session.update(try session.vault.addingEntry(title: "Mine", to: session.vault.root.uuid).vault)
        let save = try session.saveMerging()
        #expect(save.wroteFile)
        #expect(save.mergedFromDisk.contains { $0.title == "Landed in the window" }, "the landed version was not merged")
        let titles = try workspace.open().root.entries.map(\.title)
        #expect(Set(titles) == ["First", "Mine", "Landed in the window"], "\(titles)")
        let stray = try workspace.strayFiles().filter { $0 != "staged.kdbx" }
        #expect(stray.isEmpty, "\(stray)")
    }
}

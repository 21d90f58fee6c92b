import Foundation
import KDBXFormat
import MyPassCore
@testable import MyPassSync
@testable import SyncCommit
@testable import SyncFiles
@testable import SyncRemote
@testable import SyncState
@testable import SyncWatch
import Synchronization
import Testing

/// Every file call of the sync layer goes through `SystemCalls` on the `FileSystem` a job was given:
/// faults planned on that value reach the reads, the lock, directory creation and listing, the
/// watcher's calls, and nothing else; no failure path leaks a descriptor.
@Suite("SystemCalls: the file system a job is given reaches every file call")
struct SystemCallGateTests {
    /// The fake file system of each test (its faults count its own calls only).
    private let files = FileSystem.faultInjecting()

    private func withFaults<T>(_ faults: [SystemCalls.Fault], _ body: () throws -> T) rethrows -> T {
        files.plan(faults)
        defer { files.plan([]) }
        return try body()
    }

    /// This process's descriptors open on files or folders under `directory`: other suites run in
    /// parallel in this process, and their pipes and files must not count.
    private func descriptors(under directory: URL) -> Int {
        let root = directory.resolvingSymlinksInPath().path
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return names.filter { name in
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + name))?.hasPrefix(root) == true
        }.count
    }

    @Test("a failing read of the vault is an I/O error before any key is derived")
    func readFault() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let error = withFaults([SystemCalls.Fault(.read, occurrence: 1, errorNumber: EIO, pathContains: "vault.kdbx")]) {
            Result { try VaultFile.read(workspace.vaultPath, on: files) }
        }
        guard case .failure(let failure) = error else { Issue.record("the read did not fail"); return }
        #expect(FailureKind(of: failure) == .ioError)
        #expect((failure as? FileError).map { if case .system(_, _, EIO, _) = $0 { true } else { false } } == true, "\(failure)")
    }

    @Test("a failing lock stops the save; the vault is left byte for byte")
    func lockFault() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let session = try SyncSession(path: workspace.vaultPath, key: Workspace.key, state: workspace.state(on: files), settings: DeviceSettings())
        session.update(try session.vault.addingEntry(title: "Never", to: session.vault.root.uuid).vault)
        let before = try workspace.bytes()
        let result = withFaults([SystemCalls.Fault(.lock, occurrence: 1, errorNumber: EACCES)]) { Result { try session.save() } }
        guard case .failure(let error) = result else { Issue.record("saved without the lock"); return }
        #expect(error as? FileError == .permissionDenied(path: workspace.state.stem(for: workspace.vaultPath) + ".lock"), "\(error)")
        #expect(try workspace.bytes() == before)
    }

    @Test("a state directory that cannot be created is said, not ignored")
    func makeDirectoryFault() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let state = SyncStateStore(directory: workspace.directory.appendingPathComponent("fresh/state").path, on: files)
        let result = withFaults([SystemCalls.Fault(.makeDirectory, occurrence: 1, errorNumber: ENOSPC)]) { Result { try state.lock(workspace.vaultPath) } }
        guard case .failure(let error) = result else { Issue.record("the lock was taken without its directory"); return }
        #expect("\(error)".contains("No space left"), "\(error)")
    }

    @Test("no descriptor leaks on the success and failure paths of reads, saves and locks")
    func noDescriptorLeaks() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let session = try SyncSession(path: workspace.vaultPath, key: Workspace.key, state: workspace.state(on: files), settings: DeviceSettings())
        _ = try VaultFile.read(workspace.vaultPath, on: files)
        let before = descriptors(under: workspace.directory)
        for round in 0..<20 {
            session.update(try session.vault.addingEntry(title: "Round \(round)", to: session.vault.root.uuid).vault)
            let faults: [SystemCalls.Fault] = switch round % 4 {
            case 0: []
            case 1: [SystemCalls.Fault(.write, occurrence: 1, errorNumber: ENOSPC)]
            case 2: [SystemCalls.Fault(.fsync, occurrence: 1, errorNumber: EIO), SystemCalls.Fault(.fsync, occurrence: 2, errorNumber: EIO)]
            default: [SystemCalls.Fault(.close, occurrence: 1, errorNumber: EIO)]
            }
            _ = withFaults(faults) { Result { try session.save() } }
            _ = try? VaultFile.read(workspace.vaultPath, on: files)
            _ = withFaults([SystemCalls.Fault(.read, occurrence: 1, errorNumber: EIO)]) { Result { try VaultFile.read(workspace.vaultPath, on: files) } }
        }
        // 15 of the 20 rounds fail a save and every round fails a read: one leak per failure would add 35.
        let after = descriptors(under: workspace.directory)
        #expect(after <= before, "descriptors on the workspace before \(before), after \(after)")
    }

    @Test("faults planned on one file system never reach calls made on another, nor the real one")
    func faultsStayWithTheirFileSystem() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let other = FileSystem.faultInjecting()
        try withFaults([SystemCalls.Fault(.read, occurrence: 1, errorNumber: EIO, pathContains: "vault.kdbx")]) {
            #expect(throws: Never.self) { try VaultFile.read(workspace.vaultPath, on: .real) }
            #expect(throws: Never.self) { try VaultFile.read(workspace.vaultPath, on: other) }
            #expect(throws: (any Error).self) { try VaultFile.read(workspace.vaultPath, on: files) }
            // The fault was used up by the one call that counted.
            #expect(throws: Never.self) { try VaultFile.read(workspace.vaultPath, on: files) }
        }
    }

    @Test("a watcher works on its state's file system: a failing read of the vault is its error, and the next check reads it")
    func watcherUsesItsFileSystem() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let kinds = Mutex<[WatchEvent.Kind]>([])
        let watcher = VaultWatcher(path: workspace.vaultPath, key: Workspace.key, state: workspace.state(on: files),
                                   limits: .standard, settings: DeviceSettings(), policy: .merge, copyPolicy: .merge) { event in kinds.withLock { $0.append(event.kind) } }
        withFaults([SystemCalls.Fault(.read, occurrence: 1, errorNumber: EIO, pathContains: "vault.kdbx")]) {
            #expect(!watcher.check())
            #expect(watcher.failedLastCheck)
        }
        #expect(kinds.withLock { $0 } == [.error], "\(kinds.withLock { $0 })")
        #expect(watcher.check())
        #expect(!watcher.failedLastCheck)
        #expect(kinds.withLock { $0 }.last == .baseRecorded, "\(kinds.withLock { $0 })")
    }

    @Test("a pending version that cannot be read for a moment is kept, and put back when it can be: never retired for a passing error")
    func pendingVersionReadFault() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let state = workspace.state(on: files)
        let watcher = VaultWatcher(path: workspace.vaultPath, key: Workspace.key, state: state, limits: .standard, settings: DeviceSettings(), policy: .merge,
                                   copyPolicy: .merge) { _ in }
        #expect(watcher.check())
        // A version this device took in that the vault lacks (a blind save dropped its entry).
        var vault = try workspace.open()
        vault = try vault.addingEntry(title: "Only in the pending version", to: vault.root.uuid).vault
        let settings = FormatSettings(version: .v4_0, cipher: .chaCha20, kdf: .aesKDF(seed: Data(repeating: 3, count: 32), rounds: 10))
        let pending = PendingVersions(state: state, vaultPath: DurableFile.canonicalPath(workspace.vaultPath, on: .real))
        try pending.add(try KDBXWriter.serialize(vault, settings: settings, key: Workspace.key).file)
        #expect(pending.list().count == 1)
        withFaults([SystemCalls.Fault(.read, occurrence: 1, errorNumber: EIO, pathContains: ".pending/")]) {
            _ = watcher.check()
        }
        #expect(pending.list().count == 1, "a version that failed to read once was retired (deleted)")
        #expect(!(try workspace.open().root.entries.map(\.title).contains("Only in the pending version")))
        #expect(watcher.check())
        #expect(try workspace.open().root.entries.map(\.title).contains("Only in the pending version"), "the pending version was not put back")
        #expect(pending.list().isEmpty, "a version the vault holds again stays pending")
    }

    @Test("a merge decision on a refused rollback whose write fails takes nothing: the base stays this device's version, the decision fails; decided again, it merges back")
    func refusedMergeWriteFault() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let state = workspace.state(on: files)
        let path = DurableFile.canonicalPath(workspace.vaultPath, on: .real)
        let events = Mutex<[WatchEvent.Kind]>([])
        let watcher = VaultWatcher(path: workspace.vaultPath, key: Workspace.key, state: state, limits: .standard, settings: DeviceSettings(), policy: .merge,
                                   copyPolicy: .merge) { event in events.withLock { $0.append(event.kind) } }
        #expect(watcher.check())
        let older = try workspace.bytes()
        // This device's newer password, then another device's older version in its place: refused.
        let session = try SyncSession(path: workspace.vaultPath, key: Workspace.key, state: state, settings: DeviceSettings())
        let first = try #require(session.vault.root.entries.first)
        session.update(try session.vault.updatingEntry(first.uuid, at: Timestamp(unixSeconds: 1_800_000_600)) {
            $0.setField("Password", FieldValue("newer", isProtected: true))
        })
        _ = try session.save()
        let incoming = workspace.directory.appendingPathComponent("incoming.kdbx")
        try older.write(to: incoming)
        #expect(rename(incoming.path, workspace.vaultPath) == 0)
        _ = watcher.check()
        #expect(events.withLock { $0.last } == .refused)
        let newerBase = try #require(state.base(for: path)).record.fingerprint.sha256
        func password() throws -> String? { try workspace.open().root.entries.first?.field("Password")?.text }

        let credentials = try VaultCredentials(password: "sync-test")
        let vaultTemporaries = workspace.directory.path + "/" + DurableFile.temporaryPrefix
        files.plan((1...6).map { SystemCalls.Fault(.write, occurrence: $0, errorNumber: ENOSPC, pathContains: vaultTemporaries) })
        #expect(throws: WatcherDecision.Failure.self) { try decideOnce(.merge, at: path, credentials: credentials, state: state).get() }
        files.plan([])
        #expect(state.base(for: path)?.record.fingerprint.sha256 == newerBase, "the refused version became the base before anything was merged back")
        #expect(try workspace.bytes() == older && (try password()) == "one")

        let outcome = try decideOnce(.merge, at: path, credentials: credentials, state: state).get()
        #expect(outcome.summary.contains("merged back") && outcome.wroteFile, "\(outcome.summary)")
        #expect(try password() == "newer")
        // A decision about a version that is no longer on disk does nothing.
        #expect(throws: WatcherDecision.Failure.self) { try decideOnce(.overwrite, at: path, about: newerBase, credentials: credentials, state: state).get() }
    }
}

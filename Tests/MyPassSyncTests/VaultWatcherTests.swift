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
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif
import TestSupport

/// The watcher's reaction to a new version of the vault, driven step by step (no inotify).
@Suite("VaultWatcher: new versions taken in, lost content put back, nothing written otherwise", .serialized)
struct VaultWatcherTests {
    private final class Events: Sendable {
        private let list = Mutex<(kinds: [String], lines: [String])>(([], []))
        func add(_ event: WatchEvent) {
            let line = "\(event.kind): \(event.detail) \(event.changes.map { "\($0.kind) \($0.title) \($0.fields)" })"
            list.withLock { list in
                list.kinds.append(event.kind.rawValue)
                list.lines.append(line)
            }
        }
        var all: [String] { list.withLock { $0.kinds } }
        /// Every event with its detail and changes, for a failure's message.
        var described: [String] { list.withLock { $0.lines } }
    }

    private static let password = "kxc-fixture-pässword"

    private func keepassxc(_ arguments: [String]) throws {
        let result = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), ["keepassxc-cli", arguments[0], "-q"] + arguments.dropFirst(),
                                           input: Data((Self.password + "\n").utf8), environment: ["QT_QPA_PLATFORM": "offscreen"])
        #expect(result.status == 0, "\(result.standardError)")
    }

    @Test("a vault renamed aside with the other version (rclone bisync): rebuilt from this device's own file, the other folded in, both copies out of the folder; a device that only received them waits")
    func rebuildFromRenamedAside() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let theirs = workspace.directory.appendingPathComponent("theirs.kdbx").path
        try FileManager.default.copyItem(atPath: workspace.vaultPath, toPath: theirs)
        let elsewhere = SyncStateStore(directory: workspace.directory.appendingPathComponent("elsewhere").path)
        let other = try SyncSession(path: theirs, key: Workspace.key, state: elsewhere, settings: DeviceSettings())
        other.update(try other.vault.addingEntry(title: "Theirs", to: other.vault.root.uuid).vault)
        _ = try other.save()
        let mine = try SyncSession(path: workspace.vaultPath, key: Workspace.key, state: workspace.state, settings: DeviceSettings())
        mine.update(try mine.vault.addingEntry(title: "Mine", to: mine.vault.root.uuid).vault)
        _ = try mine.save()  // no watcher saw it: the save notes which file the vault is
        // What bisync does: both versions renamed aside, no vault left.
        let own = workspace.vaultPath + "..path1", received = workspace.vaultPath + "..path2"
        #expect(rename(workspace.vaultPath, own) == 0 && rename(theirs, received) == 0)
        // A device that only has the copies (its own state, no file of its own among them) waits.
        let waitingEvents = Events()
        let waiting = VaultWatcher(path: workspace.vaultPath, key: Workspace.key, state: elsewhere, limits: .standard, settings: DeviceSettings(), policy: .merge,
                                   copyPolicy: .merge) { waitingEvents.add($0) }
        #expect(!waiting.check())
        #expect(waitingEvents.all == ["waitingForRebuild"], "\(waitingEvents.described)")
        #expect(!FileManager.default.fileExists(atPath: workspace.vaultPath))
        let events = Events()
        let watcher = VaultWatcher(path: workspace.vaultPath, key: Workspace.key, state: workspace.state, limits: .standard, settings: DeviceSettings(), policy: .merge,
                                   copyPolicy: .merge) { events.add($0) }
        #expect(watcher.check())
        #expect(events.all.first == "rebuiltFromCopy", "\(events.described)")
        #expect(events.all.contains("conflictCopyMerged") && events.all.contains("conflictCopyRetired"), "\(events.described)")
        #expect(Set(try workspace.open().root.entries.map(\.title)).isSuperset(of: ["Mine", "Theirs"]))
        #expect(!FileManager.default.fileExists(atPath: own) && !FileManager.default.fileExists(atPath: received))
    }

    @Test("a version KeePassXC re-saved (its own order of fields) that descends from the synced one is taken in without a write")
    func descendantNotRewritten() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let key = try CompositeKey(password: Self.password)
        try FileManager.default.removeItem(atPath: workspace.vaultPath)
        try FileManager.default.copyItem(atPath: FileManager.default.currentDirectoryPath + "/Fixtures/vaults/kxc-3.1-aes-aeskdf-gzip.kdbx",
                                         toPath: workspace.vaultPath)
        // An entry added here (this project's order of fields), then the file re-saved by KeePassXC
        // with an edit elsewhere (KeePassXC writes fields sorted).
        let session = try SyncSession(path: workspace.vaultPath, key: key, state: workspace.state, settings: DeviceSettings())
        session.update(try session.vault.addingEntry(title: "Ours", userName: "u", to: session.vault.root.uuid).vault)
        #expect(try session.saveMerging().wroteFile)
        let events = Events()
        let watcher = VaultWatcher(path: workspace.vaultPath, key: key, state: workspace.state, limits: .standard, settings: DeviceSettings(), policy: .merge,
                                   copyPolicy: .merge) { events.add($0) }
        #expect(watcher.check())
        let edited = workspace.directory.appendingPathComponent("edited.kdbx").path
        try FileManager.default.copyItem(atPath: workspace.vaultPath, toPath: edited)
        try keepassxc(["edit", edited, "Ünïcode Bank", "--url", "https://bank.example"])
        #expect(rename(edited, workspace.vaultPath) == 0)
        let before = try workspace.bytes()
        #expect(watcher.check())
        #expect(events.all.contains("reloaded") && !events.all.contains("restored"), "\(events.all)")
        #expect(try workspace.bytes() == before, "the new version was rewritten")
        // A blind save that drops "Ours" (made from the fixture, which never had it) is repaired.
        let blind = workspace.directory.appendingPathComponent("blind.kdbx").path
        try FileManager.default.copyItem(atPath: FileManager.default.currentDirectoryPath + "/Fixtures/vaults/kxc-3.1-aes-aeskdf-gzip.kdbx",
                                         toPath: blind)
        try keepassxc(["add", blind, "Blind", "-u", "b"])
        #expect(rename(blind, workspace.vaultPath) == 0)
        #expect(watcher.check())
        #expect(events.all.filter { $0 == "restored" }.count == 1, "\(events.all)")
        let titles = try KDBXReader.open(workspace.bytes(), key: key).vault.root.entries.map(\.title)
        #expect(titles.contains("Ours") && titles.contains("Blind"), "\(titles)")
        // The restored version is this watcher's own write: the next check does nothing.
        let restored = try workspace.bytes()
        #expect(watcher.check())
        #expect(try workspace.bytes() == restored, "\(events.described)")
        #expect(events.all.last == "ownWriteIgnored", "\(events.described)")
    }

    private func writeVersion(_ vault: Vault, to path: String, key: CompositeKey) throws {
        let settings = FormatSettings(version: .v4_0, cipher: .chaCha20, kdf: .aesKDF(seed: Data((0..<32).map { _ in UInt8.random(in: 0...255) }), rounds: 10))
        try KDBXWriter.serialize(vault, settings: settings, key: key).file.write(to: URL(fileURLWithPath: path))
    }

    /// Three devices under Syncthing: this device (A) added an entry and saved; B and C changed the
    /// vault at the same moment. C's version won on every device; A's version and B's were renamed
    /// aside under the same conflict name in the same second, and Syncthing kept B's. The folder now
    /// holds C's vault and B's copy: nothing in it has A's entry. A's watcher must put it back.
    @Test("an edit whose conflict copy the sync engine lost is merged back from this device's own version")
    func ownVersionSurvivesLostCopy() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let key = Workspace.key
        let events = Events()
        let watcher = VaultWatcher(path: workspace.vaultPath, key: key, state: workspace.state, limits: .standard, settings: DeviceSettings(), policy: .merge,
                                   copyPolicy: .merge) { events.add($0) }
        #expect(watcher.check())
        let original = try KDBXReader.open(workspace.bytes(), key: key).vault
        let session = try SyncSession(path: workspace.vaultPath, key: key, state: workspace.state, settings: DeviceSettings())
        session.update(try session.vault.addingEntry(title: "Mine", userName: "a", to: session.vault.root.uuid).vault)
        #expect(try session.saveMerging().wroteFile)
        #expect(watcher.check())
        let first = original.root.entries[0].uuid
        // The workspace's vault was made at 1,800,000,000 s; the other devices edit it later.
        let later = Timestamp(unixSeconds: 1_800_000_100)
        let fromB = try original.updatingEntry(first, at: later) { $0.setField("URL", FieldValue("https://b.example", isProtected: false)) }
        let fromC = try original.addingEntry(title: "From C", to: original.root.uuid, at: later).vault
        let copy = workspace.directory.appendingPathComponent("vault.sync-conflict-20261201-225533-CCCCCCC.kdbx").path
        try writeVersion(fromB, to: copy, key: key)
        let incoming = workspace.directory.appendingPathComponent(".syncthing.vault.kdbx.tmp").path
        try writeVersion(fromC, to: incoming, key: key)
        #expect(rename(incoming, workspace.vaultPath) == 0)
        #expect(watcher.check(), "\(events.described)")
        let result = try KDBXReader.open(workspace.bytes(), key: key).vault
        let titles = Set(result.root.allEntries().map(\.entry.title))
        #expect(titles.isSuperset(of: ["Mine", "From C"]), "\(titles) \(events.described)")
        #expect(result.root.allEntries().first { $0.entry.uuid == first }?.entry.text("URL") == "https://b.example")
        #expect(!FileManager.default.fileExists(atPath: copy))
        #expect(PendingVersions(state: workspace.state, vaultPath: workspace.vaultPath).list().isEmpty, "pending versions left after the merge")
        // The merged vault is this watcher's own write: the next check writes nothing.
        let merged = try workspace.bytes()
        #expect(watcher.check())
        #expect(try workspace.bytes() == merged)
    }

    /// KeePassXC edits the vault ten times; after each, one check. Each version descends from the one
    /// before: taken in, never "restored", never rewritten (the old rule rewrote 4 of 10 with an empty
    /// change list).
    @Test("ten keepassxc-cli edits in a row: each taken in, none restored or rewritten")
    func keepassxcEditsNeverRestored() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let key = try CompositeKey(password: Self.password)
        try FileManager.default.removeItem(atPath: workspace.vaultPath)
        try FileManager.default.copyItem(atPath: FileManager.default.currentDirectoryPath + "/Fixtures/vaults/kxc-3.1-aes-aeskdf-gzip.kdbx",
                                         toPath: workspace.vaultPath)
        let events = Events()
        let watcher = VaultWatcher(path: workspace.vaultPath, key: key, state: workspace.state, limits: .standard, settings: DeviceSettings(), policy: .merge,
                                   copyPolicy: .merge) { events.add($0) }
        #expect(watcher.check())
        for round in 1...10 {
            try keepassxc(["edit", workspace.vaultPath, round % 2 == 0 ? "Internet/GitHub" : "Ünïcode Bank", "-u", "u-\(round)"])
            let edited = try workspace.bytes()
            #expect(watcher.check())
            #expect(try workspace.bytes() == edited, "round \(round): the watcher rewrote KeePassXC's version: \(events.described)")
        }
        #expect(events.all.filter { $0 == "reloaded" }.count == 10, "\(events.described)")
        #expect(!events.all.contains("restored"), "\(events.described)")
    }

    /// A copy that does not open is remembered in the state directory as it was (inode, size, time):
    /// a later run (`watch --once` from a timer is a new process each time) does not open it again
    /// while it looks the same, and says so once; once it changes it is tried again. Shown with a
    /// copy rewritten in place to a valid one of the same size, its time put back: a run that opened
    /// it would merge it.
    @Test("a vault replaced by a symlink (to the same database, outside the folder) is refused once, never read or written through; a copy waits until the file is back, then is merged")
    func vaultBecomesSymlink() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let outsideFolder = FileManager.default.temporaryDirectory.appendingPathComponent("outside-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: outsideFolder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: outsideFolder) }
        let events = Events()
        let watcher = VaultWatcher(path: workspace.vaultPath, key: Workspace.key, state: workspace.state, limits: .standard, settings: DeviceSettings(), policy: .merge,
                                   copyPolicy: .merge) { events.add($0) }
        #expect(watcher.check())
        let started = events.all.count

        // The vault moved out and linked back in; a conflict copy arrives beside the link.
        let outside = outsideFolder.appendingPathComponent("vault.kdbx").path
        #expect(rename(workspace.vaultPath, outside) == 0 && symlink(outside, workspace.vaultPath) == 0)
        let outsideBytes = try Data(contentsOf: URL(fileURLWithPath: outside))
        let original = try KDBXReader.open(outsideBytes, key: Workspace.key).vault
        let settings = FormatSettings(version: .v4_0, cipher: .chaCha20, kdf: .aesKDF(seed: Data(repeating: 7, count: 32), rounds: 10))
        let copy = workspace.directory.appendingPathComponent("vault.sync-conflict-20261201-120000-PHONEPH.kdbx").path
        try KDBXWriter.serialize(try original.addingEntry(title: "From the phone", to: original.root.uuid, at: Timestamp(unixSeconds: 1_800_000_200)).vault,
                                 settings: settings, key: Workspace.key).file.write(to: URL(fileURLWithPath: copy))

        #expect(!watcher.check())
        #expect(!watcher.check())
        let refused = Array(events.described.dropFirst(started))
        #expect(refused.count == 1 && refused[0].hasPrefix("error:") && refused[0].contains("symlink"), "told once: \(refused)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: outside)) == outsideBytes, "the copy was merged through the link")
        #expect(SystemCalls.status(atPath: workspace.vaultPath, on: .real)?.isSymbolicLink == true, "the link was replaced")
        #expect(FileManager.default.fileExists(atPath: copy))

        // The file itself back in its place: the copy is merged into it.
        #expect(unlink(workspace.vaultPath) == 0 && rename(outside, workspace.vaultPath) == 0)
        #expect(watcher.check())
        #expect(events.all.contains("conflictCopyMerged"), "\(events.described)")
        #expect(try workspace.open().root.entries.map(\.title).contains("From the phone"))
    }

    @Test("a failed copy is not opened again by a later run while it is unchanged; a changed one is tried again")
    func failedCopyRemembered() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let key = Workspace.key
        let watch: (Events) -> VaultWatcher = { events in
            VaultWatcher(path: workspace.vaultPath, key: key, state: workspace.state, limits: .standard, settings: DeviceSettings(), policy: .merge,
                         copyPolicy: .merge) { events.add($0) }
        }
        let first = Events()
        #expect(watch(first).check())
        let original = try KDBXReader.open(workspace.bytes(), key: key).vault
        let settings = FormatSettings(version: .v4_0, cipher: .chaCha20, kdf: .aesKDF(seed: Data(repeating: 5, count: 32), rounds: 10),
                                      compression: .none)
        let later = Timestamp(unixSeconds: 1_800_000_100)
        let stranger = try KDBXWriter.serialize(try original.addingEntry(title: "Not for this key", to: original.root.uuid, at: later).vault,
                                                settings: settings, key: CompositeKey(password: "another password")).file
        let valid = try KDBXWriter.serialize(try original.addingEntry(title: "Would be merged!", to: original.root.uuid, at: later).vault,
                                             settings: settings, key: key).file
        try #require(stranger.count == valid.count, "the two copies must have the same size")
        let copy = workspace.directory.appendingPathComponent("vault.sync-conflict-20261201-120000-JUNKJUN.kdbx").path
        try stranger.write(to: URL(fileURLWithPath: copy))
        let watcher = watch(first)
        #expect(watcher.check())
        #expect(first.all.last == "conflictCopyLeft", "\(first.described)")
        #expect(FailedCopies(state: workspace.state, vaultPath: DurableFile.resolvedPath(workspace.vaultPath, on: .real)).load().values.map(\.reason) == ["otherCredentials"])

        // Rewritten in place (same inode, same size), its modification time put back.
        var before = stat()
        #expect(stat(copy, &before) == 0)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: copy))
        try handle.write(contentsOf: valid)
        try handle.close()
        var times = [before.st_atim, before.st_mtim]
        #expect(utimensat(AT_FDCWD, copy, &times, 0) == 0)

        let second = Events()
        let nextRun = watch(second)
        #expect(nextRun.check())
        #expect(second.all.filter { $0 == "conflictCopyLeft" }.count == 1, "said once: \(second.described)")
        #expect(!(try KDBXReader.open(workspace.bytes(), key: key).vault.root.entries.map(\.title).contains("Would be merged!")),
                "the remembered copy was opened again")
        #expect(nextRun.check())
        #expect(second.all.filter { $0 == "conflictCopyLeft" }.count == 1, "said again: \(second.described)")

        // Changed (a new modification time): tried again, and merged.
        var now = [timespec(tv_sec: before.st_mtim.tv_sec + 60, tv_nsec: 0), timespec(tv_sec: before.st_mtim.tv_sec + 60, tv_nsec: 0)]
        #expect(utimensat(AT_FDCWD, copy, &now, 0) == 0)
        #expect(nextRun.check())
        #expect(try KDBXReader.open(workspace.bytes(), key: key).vault.root.entries.map(\.title).contains("Would be merged!"), "\(second.described)")
        #expect(FailedCopies(state: workspace.state, vaultPath: DurableFile.resolvedPath(workspace.vaultPath, on: .real)).load().isEmpty)
    }
}

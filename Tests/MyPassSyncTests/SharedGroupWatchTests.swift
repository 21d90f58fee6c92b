import Foundation
import KDBXFormat
import MyPassCore
import Testing
import TestSupport
import SyncCommit
import SyncFiles
import SyncState
@testable import SyncWatch

/// The watcher keeps a shared group (KeeShare) in step with its container on real inotify events:
/// a container changed by another writer is merged into the group, an edit inside the group reaches
/// the container, a conflict copy of the container is folded, and nothing outside the group leaks.
@Suite("Shared groups kept in step by the watcher (real files, real inotify)", .serialized)
struct SharedGroupWatchTests {
    static let containerPassword = "contäiner-pass"

    /// A workspace whose vault has groups Family (an entry) and Private (an entry), Family shared
    /// with `family.kdbx` (`mode`), approved on this device; the container written by a first pass.
    static func sharedWorkspace(_ mode: ShareMode) throws -> (Workspace, family: UUID) {
        let workspace = try Workspace()
        let session = try SyncSession(path: workspace.vaultPath, key: Workspace.key, state: workspace.state, settings: DeviceSettings())
        var vault = session.vault
        let family = try vault.addingGroup(named: "Family", to: vault.root.uuid)
        vault = family.vault
        vault = try vault.addingGroup(named: "Private", to: vault.root.uuid).vault
        vault = try vault.addingEntry(title: "Netflix", userName: "fam", password: "tv-secret", to: family.uuid).vault
        vault = try vault.addingEntry(title: "Bank", userName: "me", password: "bank-secret", to: vault.group(at: VaultPath("/Private"))!.uuid).vault
        let reference = ShareReference(mode: mode, containerPath: "family.kdbx", password: ProtectedValue(containerPassword))
        session.update(try ShareSync.sharing(family.uuid, of: vault, with: reference))
        try session.saveMerging()
        try ShareSync(vaultPath: workspace.vaultPath, state: workspace.state).approve(family.uuid, in: session.vault)
        _ = try session.syncShares()
        return (workspace, family.uuid)
    }

    static func containerPath(_ workspace: Workspace) -> String { workspace.directory.appendingPathComponent("family.kdbx").path }

    static func container(_ workspace: Workspace) throws -> Vault {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: containerPath(workspace)))
        return try KDBXReader.open(bytes, key: try CompositeKey(password: containerPassword)).vault
    }

    /// Writes `container` as another writer would (a new file renamed over the container).
    static func writeContainer(_ container: Vault, to path: String) throws {
        let settings = FormatSettings(version: .v4_0, cipher: .aes256, kdf: .aesKDF(seed: Data(repeating: 3, count: 32), rounds: 10))
        let bytes = try KDBXWriter.encode(container, settings: settings, key: try CompositeKey(password: containerPassword)).file
        let temporary = path + ".other-writer"
        try bytes.write(to: URL(fileURLWithPath: temporary))
        guard rename(temporary, path) == 0 else { throw CocoaError(.fileWriteUnknown) }
    }

    static func vault(_ workspace: Workspace) throws -> Vault {
        try KDBXReader.open(try workspace.bytes(), key: Workspace.key).vault
    }

    /// Runs a real engine over the workspace's vault while `body` acts; stops it after.
    static func watching(_ workspace: Workspace, events: RecordedEvents, adjusting adjust: (inout WatchEngine.Settings) -> Void = { _ in },
                         _ body: () throws -> Void) throws {
        var settings = WatchEngine.Settings(device: DeviceSettings())
        settings.debounce = 0.1
        adjust(&settings)
        let engine = WatchEngine(vaults: [workspace.vaultPath], credentials: try VaultCredentials(password: "sync-test"), limits: .standard,
                                 state: workspace.state, settings: settings) { events.add($0) }
        let finished = DispatchSemaphore(value: 0)
        Thread { engine.run(); finished.signal() }.start()
        defer {
            engine.stop()
            _ = finished.wait(timeout: .now() + 30)
        }
        try body()
    }

    @Test("another writer's change to the container is merged into the group; an edit in the group reaches the container; Private never does")
    func containerAndVaultInStep() throws {
        let (workspace, family) = try Self.sharedWorkspace(.synchronizing)
        defer { workspace.remove() }
        let events = RecordedEvents()
        try Self.watching(workspace, events: events) {
            var other = try Self.container(workspace)
            other = try other.addingEntry(title: "Spotify", userName: "fam", password: "music-secret", to: other.root.uuid).vault
            try Self.writeContainer(other, to: Self.containerPath(workspace))
            #expect(pollUntil(timeout: 20) { (try? Self.vault(workspace))?.group(at: VaultPath("/Family"))?.entries.contains { $0.title == "Spotify" } == true },
                    "the container's new entry never reached the group: \(events.all.map(\.detail))")
            // An edit inside the group, saved by another program (a session of its own).
            let editor = try SyncSession(path: workspace.vaultPath, key: Workspace.key,
                                         state: SyncStateStore(directory: workspace.directory.appendingPathComponent("editor-state").path), settings: DeviceSettings())
            let netflix = try #require(editor.vault.root.group(family)?.entries.first { $0.title == "Netflix" })
            editor.update(try editor.vault.updatingEntry(netflix.uuid) { $0.setField("UserName", .plain("family-tv")) })
            try editor.saveMerging()
            #expect(pollUntil(timeout: 60) { (try? Self.container(workspace))?.root.entries.contains { $0.userName == "family-tv" } == true },
                    "the group's edit never reached the container: \(events.all.map(\.detail))")
        }
        let container = try Self.container(workspace)
        #expect(Set(container.root.entries.map(\.title)) == ["Netflix", "Spotify"], "the container holds \(container.root.entries.map(\.title))")
        #expect(events.all.contains { if case .shareSynced = $0 { return true }; return false })
        for event in events.all { #expect(!event.jsonLine(at: Date()).contains("secret"), "a value in an event: \(event.detail)") }
    }

    @Test("a conflict copy of the container is folded into the group and leaves the synced folder")
    func containerCopyFolded() throws {
        let (workspace, _) = try Self.sharedWorkspace(.synchronizing)
        defer { workspace.remove() }
        let events = RecordedEvents()
        try Self.watching(workspace, events: events) {
            var copy = try Self.container(workspace)
            copy = try copy.addingEntry(title: "FromCopy", password: "copy-secret", to: copy.root.uuid).vault
            let copyPath = workspace.directory.appendingPathComponent("family.sync-conflict-20261205-101010-PHONE12.kdbx").path
            try Self.writeContainer(copy, to: copyPath)
            #expect(pollUntil(timeout: 60) { !FileManager.default.fileExists(atPath: copyPath) }, "the copy stayed: \(events.all.map(\.detail))")
        }
        #expect(try Self.vault(workspace).group(at: VaultPath("/Family"))?.entries.contains { $0.title == "FromCopy" } == true)
        #expect(try Self.container(workspace).root.entries.contains { $0.title == "FromCopy" })
    }

    @Test("a reference that arrives from elsewhere (not approved here) writes no container and is told once")
    func unapprovedReferenceIsInert() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let session = try SyncSession(path: workspace.vaultPath, key: Workspace.key, state: workspace.state, settings: DeviceSettings())
        let planted = try session.vault.addingGroup(named: "Planted", to: session.vault.root.uuid)
        let reference = ShareReference(mode: .exporting, containerPath: "../outside.kdbx", password: ProtectedValue("x"))
        session.update(try ShareSync.sharing(planted.uuid, of: try planted.vault.addingEntry(title: "Mail", password: "mail-secret", to: planted.uuid).vault,
                                             with: reference))
        try session.saveMerging()
        let events = RecordedEvents()
        try Self.watching(workspace, events: events) {
            #expect(pollUntil(timeout: 60) { events.all.contains { if case .shareAwaitsApproval = $0 { return true }; return false } })
        }
        let outside = workspace.directory.deletingLastPathComponent().appendingPathComponent("outside.kdbx").path
        #expect(!FileManager.default.fileExists(atPath: outside))
        #expect(events.all.filter { if case .shareAwaitsApproval = $0 { return true }; return false }.count == 1)
    }

    @Test("exporting only: what another writer added to the container stays there through this vault's later exports")
    func exportOnlyKeepsOthersAdditions() throws {
        let (workspace, family) = try Self.sharedWorkspace(.exporting)
        defer { workspace.remove() }
        var other = try Self.container(workspace)
        other = try other.addingEntry(title: "Theirs", password: "their-secret", to: other.root.uuid).vault
        try Self.writeContainer(other, to: Self.containerPath(workspace))
        for round in 0..<3 {
            let session = try SyncSession(path: workspace.vaultPath, key: Workspace.key, state: workspace.state, settings: DeviceSettings())
            session.update(try session.vault.addingEntry(title: "Mine \(round)", password: "mine", to: family).vault)
            try session.saveMerging()
            let pass = try session.syncShares()
            #expect(pass.outcomes.first?.exported == true, "round \(round): \(pass.outcomes.map { $0.skipped ?? "" })")
            let titles = Set(try Self.container(workspace).root.entries.map(\.title))
            #expect(titles.isSuperset(of: ["Theirs", "Netflix", "Mine \(round)"]), "round \(round): the container holds \(titles)")
        }
        #expect(try Self.vault(workspace).group(at: VaultPath("/Family"))?.entries.contains { $0.title == "Theirs" } == false,
                "an export-only share imported into the vault")
    }

    @Test("a container rewritten with junk again and again (another password) costs the vault's allowance for versions from elsewhere, then waits: told once, retried later")
    func junkContainerWaitsForTheAllowance() throws {
        let (workspace, _) = try Self.sharedWorkspace(.synchronizing)
        defer { workspace.remove() }
        let events = RecordedEvents()
        try Self.watching(workspace, events: events, adjusting: { settings in
            settings.debounce = 0.05
            settings.foreignOpeningTime = 0.2
            settings.foreignOpeningWindow = 600
        }) {
            // Junk: a KDBX file under another password whose key takes a while to derive.
            let junkSettings = FormatSettings(version: .v4_0, cipher: .aes256, kdf: .aesKDF(seed: Data(repeating: 5, count: 32), rounds: 3_000_000))
            let junk = try KDBXWriter.encode(Vault.empty(name: "junk"), settings: junkSettings, key: try CompositeKey(password: "not the container's")).file
            let path = Self.containerPath(workspace)
            func waiting() -> Bool {
                events.all.contains { if case .shareIdle(_, _, let reason) = $0 { return reason.contains("waits") }; return false }
            }
            for round in 0..<20 where !waiting() {
                try junk.write(to: URL(fileURLWithPath: path + ".junk-\(round)"))
                guard rename(path + ".junk-\(round)", path) == 0 else { throw CocoaError(.fileWriteUnknown) }
                _ = pollUntil(timeout: 3) { waiting() }
            }
            #expect(pollUntil(timeout: 60) { waiting() }, "the junk container never waited: \(events.all.map(\.detail))")
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == junk, "the junk container was written over")
        }
    }
}

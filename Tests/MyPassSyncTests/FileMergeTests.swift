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

/// The merge job through the library API: several copies merged and saved once, dry runs, the base
/// rule, output elsewhere, and the refusal of a copy whose key changed.
@Suite("FileMerge: N copies merged into a vault, saved once", .serialized)
struct FileMergeTests {
    private static let credentials = VaultCredentials(key: Workspace.key)

    /// A copy of the workspace's vault at `name` whose entry "First" has `edit` applied at `time`.
    private func copy(_ workspace: Workspace, _ name: String, at time: Int64, edit: (inout Entry) -> Void) throws -> String {
        let opened = try KDBXReader.open(workspace.bytes(), key: Workspace.key)
        let uuid = try #require(opened.vault.root.entries.first?.uuid)
        let vault = try opened.vault.updatingEntry(uuid, at: Timestamp(unixSeconds: time)) { edit(&$0) }
        let path = workspace.directory.appendingPathComponent(name).path
        try KDBXWriter.serialize(vault, settings: opened.settings, key: Workspace.key).file.write(to: URL(fileURLWithPath: path))
        return path
    }

    private func first(_ workspace: Workspace) throws -> Entry {
        try #require(KDBXReader.open(workspace.bytes(), key: Workspace.key).vault.root.entries.first)
    }

    @Test("two copies, each with another field edited, are both in the vault after one save")
    func twoCopies() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let phone = try copy(workspace, "phone.kdbx", at: 1_800_000_100) { $0.setField("UserName", FieldValue("from-phone", isProtected: false)) }
        let laptop = try copy(workspace, "laptop.kdbx", at: 1_800_000_200) { $0.setField("URL", FieldValue("https://laptop.example", isProtected: false)) }
        let report = try FileMerge.run(FileMerge.Request(copies: [phone, laptop], state: workspace.state, settings: DeviceSettings()), on: VaultFile.read(workspace.vaultPath),
                                      credentials: Self.credentials)
        #expect(report.written == workspace.vaultPath && !report.unchanged && report.hasChanges)
        #expect(report.sections.map { $0.remote } == [phone, laptop])
        let entry = try first(workspace)
        #expect(entry.text("UserName") == "from-phone" && entry.text("URL") == "https://laptop.example")
        #expect(try JSONText.encode(report).contains("\"schema\" : 1"))
    }

    @Test("a dry run and a merge that brings nothing leave the file byte for byte")
    func nothingWritten() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let phone = try copy(workspace, "phone.kdbx", at: 1_800_000_100) { $0.setField("UserName", FieldValue("from-phone", isProtected: false)) }
        let before = try workspace.bytes()
        var request = FileMerge.Request(copies: [phone], state: workspace.state, settings: DeviceSettings())
        request.dryRun = true
        let dry = try FileMerge.run(request, on: VaultFile.read(workspace.vaultPath), credentials: Self.credentials)
        #expect(dry.dryRun && dry.hasChanges && dry.written == nil)
        #expect(try workspace.bytes() == before)
        let same = workspace.directory.appendingPathComponent("same.kdbx").path
        try FileManager.default.copyItem(atPath: workspace.vaultPath, toPath: same)
        let unchanged = try FileMerge.run(FileMerge.Request(copies: [same], state: workspace.state, settings: DeviceSettings()), on: VaultFile.read(workspace.vaultPath),
                                         credentials: Self.credentials)
        #expect(unchanged.unchanged && !unchanged.hasChanges)
        #expect(try workspace.bytes() == before)
    }

    @Test("an older copy merged with the remembered base (a later version) rolls nothing back")
    func rememberedBaseOnlyWhereItFits() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let older = try copy(workspace, "older.kdbx", at: 1_800_000_050) { $0.setField("Title", FieldValue("Old title", isProtected: false)) }
        // The vault moves on (newer title) and this device records that version as its base.
        let session = try SyncSession(path: workspace.vaultPath, key: Workspace.key, state: workspace.state, settings: DeviceSettings())
        let uuid = try #require(session.vault.root.entries.first?.uuid)
        session.update(try session.vault.updatingEntry(uuid, at: Timestamp(unixSeconds: 1_800_000_300)) { $0.setField("Title", FieldValue("New title", isProtected: false)) })
        #expect(try session.saveMerging().wroteFile)
        // Against that base the older copy would read as "changed the title back"; it does not descend from it.
        _ = try FileMerge.run(FileMerge.Request(copies: [older], state: workspace.state, settings: DeviceSettings()), on: VaultFile.read(workspace.vaultPath),
                             credentials: Self.credentials)
        #expect(try first(workspace).title == "New title")
    }

    @Test("--output writes the verified result elsewhere and leaves the vault alone")
    func outputElsewhere() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let phone = try copy(workspace, "phone.kdbx", at: 1_800_000_100) { $0.setField("UserName", FieldValue("from-phone", isProtected: false)) }
        let before = try workspace.bytes()
        var request = FileMerge.Request(copies: [phone], state: workspace.state, settings: DeviceSettings())
        request.outputPath = workspace.directory.appendingPathComponent("out.kdbx").path
        let report = try FileMerge.run(request, on: VaultFile.read(workspace.vaultPath), credentials: Self.credentials)
        #expect(report.written == request.outputPath)
        #expect(try workspace.bytes() == before)
        let written = try KDBXReader.open(Data(contentsOf: URL(fileURLWithPath: request.outputPath!)), key: Workspace.key).vault
        #expect(written.root.entries.first?.text("UserName") == "from-phone")
    }

    @Test("a copy that does not open with the credentials stops the merge; nothing is written")
    func rotatedKeyRefused() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let opened = try KDBXReader.open(workspace.bytes(), key: Workspace.key)
        let rotated = workspace.directory.appendingPathComponent("rotated.kdbx").path
        try KDBXWriter.serialize(opened.vault, settings: opened.settings, key: CompositeKey(password: "another"))
            .file.write(to: URL(fileURLWithPath: rotated))
        let before = try workspace.bytes()
        #expect(throws: MergeRefusal.self) {
            try FileMerge.run(FileMerge.Request(copies: [rotated], state: workspace.state, settings: DeviceSettings()), on: VaultFile.read(workspace.vaultPath),
                             credentials: Self.credentials)
        }
        #expect(try workspace.bytes() == before)
        #expect(FailureKind(of: MergeRefusal.keyRotated(rotated)) == .refusedForSafety)
    }
}

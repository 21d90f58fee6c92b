import Foundation
import KDBXFormat
import MyPassCore
import MyPassCrypto
@testable import MyPassSync
@testable import SyncCommit
@testable import SyncFiles
@testable import SyncState
import Testing

/// Every way a merge is written goes through `MergeCommit.write` and leaves exactly one journal
/// record (none for a save of edits alone), with the bytes the swap replaced as "before" and the
/// file's bytes as "after".
@Suite("one door: each merge writer leaves one journal record", .serialized)
struct MergeDoorTests {
    private func journal(_ workspace: Workspace) -> [MergeJournal.Record] {
        MergeJournal(state: workspace.state, vaultPath: workspace.vaultPath).records()
    }

    /// The one record of `workspace`, of `kind`, over `before`, with the vault's bytes as "after".
    private func expectOneRecord(_ workspace: Workspace, _ kind: MergeJournal.Kind, before: Data, inputs: [String]) throws {
        let records = journal(workspace)
        #expect(records.count == 1, "\(records)")
        guard let record = records.first else { return }
        #expect(record.kind == kind)
        #expect(record.inputs.map(\.name) == inputs)
        #expect(record.beforeSHA256 == SHA256.hexHash(before))
        #expect(record.afterSHA256 == SHA256.hexHash(try workspace.bytes()))
    }

    /// Another device's version with an entry `title` added, written over the vault (its own state).
    private func otherWriterSaves(_ title: String, in workspace: Workspace) throws {
        let other = try SyncSession(path: workspace.vaultPath, key: Workspace.key,
                                    state: SyncStateStore(directory: workspace.directory.appendingPathComponent("other-state").path),
                                    settings: DeviceSettings())
        other.update(try other.vault.addingEntry(title: title, to: other.vault.root.uuid).vault)
        _ = try other.save()
    }

    @Test("a merge of inputs: one record of its kind, naming its inputs")
    func mergedInputs() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let before = try workspace.bytes()
        let session = try SyncSession(path: workspace.vaultPath, key: Workspace.key, state: workspace.state, settings: DeviceSettings())
        let copy = try session.vault.addingEntry(title: "From the copy", to: session.vault.root.uuid).vault
        let merged = try MergeCommit.merge([MergeCommit.Input(name: "copy", vault: copy, sha256: nil, base: .none)], into: session.vault)
        #expect(try MergeCommit.write(.merged(merged), through: session, journal: .conflictCopies).wroteFile)
        try expectOneRecord(workspace, .conflictCopies, before: before, inputs: ["copy"])
    }

    @Test("a merge of inputs that meets a version written meanwhile: still one record, before is the version it replaced")
    func mergedInputsMeetAWriter() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let session = try SyncSession(path: workspace.vaultPath, key: Workspace.key, state: workspace.state, settings: DeviceSettings())
        try otherWriterSaves("Meanwhile", in: workspace)
        let theirs = try workspace.bytes()
        let copy = try session.vault.addingEntry(title: "From the copy", to: session.vault.root.uuid).vault
        let merged = try MergeCommit.merge([MergeCommit.Input(name: "copy", vault: copy, sha256: nil, base: .none)], into: session.vault)
        let outcome = try MergeCommit.write(.merged(merged), through: session, journal: .sync)
        #expect(outcome.wroteFile && outcome.mergedFromDisk.contains { $0.title == "Meanwhile" })
        #expect(Set(try workspace.open().root.entries.map(\.title)) == ["First", "Meanwhile", "From the copy"])
        try expectOneRecord(workspace, .sync, before: theirs, inputs: ["copy"])
    }

    @Test("a save of edits alone is no merge: no record")
    func editsAlone() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let session = try SyncSession(path: workspace.vaultPath, key: Workspace.key, state: workspace.state, settings: DeviceSettings())
        session.update(try session.vault.addingEntry(title: "Mine", to: session.vault.root.uuid).vault)
        #expect(try session.saveMerging().wroteFile)
        #expect(journal(workspace).isEmpty)
    }

    @Test("edits that meet a version written meanwhile (saveMerging, resolve --merge): one record naming the disk version",
          arguments: [false, true])
    func editsMeetAWriter(resolving: Bool) throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let (session, conflict, theirs) = try workspace.conflictingSession(theirs: "Meanwhile")
        if resolving {
            #expect(try session.resolve(conflict, by: .merge).wroteFile)
        } else {
            #expect(try session.saveMerging().wroteFile)
        }
        #expect(Set(try workspace.open().root.entries.map(\.title)) == ["First", "Meanwhile", "Mine"])
        try expectOneRecord(workspace, .resolve, before: theirs, inputs: [workspace.vaultPath + " (on disk)"])
    }

    @Test("the merge job (merge, git, Unison): one record")
    func fileMerge() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let before = try workspace.bytes()
        let opened = try KDBXReader.open(before, key: Workspace.key)
        let phone = workspace.directory.appendingPathComponent("phone.kdbx").path
        let vault = try opened.vault.addingEntry(title: "From the phone", to: opened.vault.root.uuid).vault
        try KDBXWriter.serialize(vault, settings: opened.settings, key: Workspace.key).file.write(to: URL(fileURLWithPath: phone))
        let report = try FileMerge.run(FileMerge.Request(copies: [phone], state: workspace.state, settings: DeviceSettings()), on: VaultFile.read(workspace.vaultPath),
                                       credentials: VaultCredentials(key: Workspace.key))
        #expect(report.written == workspace.vaultPath)
        try expectOneRecord(workspace, .merge, before: before, inputs: [phone])
    }
}

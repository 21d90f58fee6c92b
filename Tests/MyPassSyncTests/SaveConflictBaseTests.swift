import Foundation
import Testing
import KDBXFormat
import MyPassCore
@testable import SyncCommit
import SyncState

/// A save that meets a version written meanwhile merges the two against the version the session's
/// work was made from, never against whatever another writer recorded as this device's base since.
@Suite("a save conflict merges against the version the session was made from")
struct SaveConflictBaseTests {
    /// The real-Syncthing shape: three devices set one password in the same second. Here the watcher
    /// folds a copy (another device's older value) into the version it read, while the command-line
    /// edit on the same device meets that version on its own save, merges (its value into history,
    /// the same second) and records that result as the base. The watcher's save then finds the file
    /// changed: merged against that base, its history, which lacks the command's value, read as
    /// history cleaned and the value was dropped.
    /// Which of two same-second values is current is decided by their digests: both orders are run.
    @Test("a value another writer on this device merged into history meanwhile survives the watcher's save",
          arguments: [("set-here", "set-there"), ("set-there", "set-here")])
    func anotherWritersBaseIsNotTheAncestor(here: String, there: String) throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let start = try workspace.open()
        let uuid = try #require(start.root.entries.first?.uuid)
        let second = Timestamp(unixSeconds: 1_800_000_100)
        func setting(_ password: String, in vault: Vault, at time: Timestamp) throws -> Vault {
            try vault.updatingEntry(uuid, at: time) { $0.setField(EntryField.password, FieldValue(password, isProtected: true)) }
        }
        // The command-line edit reads the file and sets its value.
        let command = try SyncSession(path: workspace.vaultPath, key: Workspace.key, state: workspace.state, settings: DeviceSettings())
        command.update(try setting(here, in: command.vault, at: second))
        // Another device's value of the same second arrives (the sync engine replaces the file).
        let other = try SyncSession(path: workspace.vaultPath, key: Workspace.key,
                                    state: SyncStateStore(directory: workspace.directory.appendingPathComponent("other-state").path), settings: DeviceSettings())
        other.update(try setting(there, in: other.vault, at: second))
        #expect(try other.save().wroteFile == true)
        // The watcher reads that version; the command's save merges it and records the result as the base.
        let watcher = try SyncSession(path: workspace.vaultPath, key: Workspace.key, state: workspace.state, settings: DeviceSettings())
        #expect(try command.saveMerging().wroteFile)
        let afterCommand = try workspace.open()
        #expect(Self.values(in: afterCommand, uuid).isSuperset(of: [here, there]))
        // The watcher folds a third device's older value into what it read, and saves.
        let copy = try setting("set-elsewhere", in: start, at: Timestamp(unixSeconds: 1_800_000_099))
        let merged = try MergeCommit.merge([MergeCommit.Input(name: "copy", vault: copy, sha256: nil, base: .none)], into: watcher.vault)
        #expect(try MergeCommit.write(.merged(merged), through: watcher, journal: .conflictCopies).wroteFile)
        let final = try workspace.open()
        let values = Self.values(in: final, uuid)
        #expect(values.isSuperset(of: ["one", here, there, "set-elsewhere"]), "\(values)")
    }

    /// Every password entry `uuid` holds, current or in its history.
    static func values(in vault: Vault, _ uuid: UUID) -> Set<String> {
        guard let entry = vault.root.entry(uuid)?.entry else { return [] }
        return Set(([entry] + entry.history).map { $0.text(EntryField.password) })
    }
}

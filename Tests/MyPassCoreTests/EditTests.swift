import Foundation
import MyPassCore
import Testing

/// A small vault: root with groups Work (entry Mail) and Home, at time t0.
private struct Fixture {
    static let t0 = Timestamp(iso8601: "2026-01-01T00:00:00Z")!
    static let t1 = Timestamp(iso8601: "2026-01-02T00:00:00Z")!
    static let t2 = Timestamp(iso8601: "2026-01-03T00:00:00Z")!

    var vault: Vault
    let work: UUID
    let home: UUID
    let mail: UUID

    init() throws {
        var vault = Vault.empty(name: "edits", at: Self.t0)
        let work: UUID, home: UUID, mail: UUID
        (vault, work) = try vault.addingGroup(named: "Work", to: vault.root.uuid, at: Self.t0)
        (vault, home) = try vault.addingGroup(named: "Home", to: vault.root.uuid, at: Self.t0)
        (vault, mail) = try vault.addingEntry(title: "Mail", userName: "me", password: "pw1", url: "https://mail.example",
                                             to: work, at: Self.t0)
        self.vault = vault
        self.work = work
        self.home = home
        self.mail = mail
    }
}

@Suite("Edit operations keep KeePass's bookkeeping")
struct EditTests {
    @Test("a new entry has all times set, standard fields, and a protected password")
    func addEntry() throws {
        let fixture = try Fixture()
        let (entry, parent) = try #require(fixture.vault.root.entry(fixture.mail))
        #expect(parent == fixture.work)
        #expect(entry.times == Times(allAt: Fixture.t0))
        #expect(entry.fields.map(\.key) == ["Title", "UserName", "Password", "URL", "Notes"])
        #expect(entry.field("Password")?.isProtected == true)
        #expect(entry.field("UserName")?.isProtected == false)
        #expect(entry.text("Password") == "pw1")
    }

    @Test("editing pushes the previous version into history and bumps the modification time")
    func editPushesHistory() throws {
        let fixture = try Fixture()
        let edited = try fixture.vault.updatingEntry(fixture.mail, at: Fixture.t1) { $0.setField("Password", FieldValue("pw2", isProtected: true)) }
        let entry = try #require(edited.root.entry(fixture.mail)?.entry)
        #expect(entry.text("Password") == "pw2")
        #expect(entry.times.lastModified == Fixture.t1)
        #expect(entry.times.created == Fixture.t0)
        #expect(entry.history.count == 1)
        #expect(entry.history[0].text("Password") == "pw1")
        #expect(entry.history[0].times.lastModified == Fixture.t0)
        #expect(entry.history[0].history.isEmpty)
        // The original snapshot is untouched.
        #expect(fixture.vault.root.entry(fixture.mail)?.entry.text("Password") == "pw1")
    }

    @Test("an edit that changes nothing leaves no history")
    func noOpEdit() throws {
        let fixture = try Fixture()
        let edited = try fixture.vault.updatingEntry(fixture.mail, at: Fixture.t1) { $0.setField("UserName", .plain("me")) }
        #expect(edited == fixture.vault)
    }

    @Test("history respects HistoryMaxItems, dropping the oldest")
    func historyMaxItems() throws {
        var fixture = try Fixture()
        fixture.vault.meta.historyMaxItems = 3
        var vault = fixture.vault
        for round in 1...6 {
            vault = try vault.updatingEntry(fixture.mail, at: Timestamp(unixSeconds: Int64(1_800_000_000 + round))) {
                $0.setField("Notes", .plain("note \(round)"))
            }
        }
        let entry = try #require(vault.root.entry(fixture.mail)?.entry)
        #expect(entry.history.count == 3)
        #expect(entry.history.map(\.notes) == ["note 3", "note 4", "note 5"])
        #expect(entry.notes == "note 6")
    }

    @Test("history respects HistoryMaxSize")
    func historyMaxSize() throws {
        var fixture = try Fixture()
        fixture.vault.meta.historyMaxSize = 2500
        var vault = fixture.vault
        for round in 1...5 {
            vault = try vault.updatingEntry(fixture.mail, at: Timestamp(unixSeconds: Int64(1_800_000_000 + round))) {
                $0.setField("Notes", .plain(String(repeating: "x", count: 1000) + "\(round)"))
            }
        }
        let history = try #require(vault.root.entry(fixture.mail)?.entry.history)
        #expect(history.count == 2)
        #expect(history.last?.notes.hasSuffix("4") == true)
    }

    @Test("moving sets LocationChanged and PreviousParentGroup and keeps the entry otherwise")
    func moveEntry() throws {
        let fixture = try Fixture()
        let moved = try fixture.vault.movingEntry(fixture.mail, to: fixture.home, at: Fixture.t1)
        let (entry, parent) = try #require(moved.root.entry(fixture.mail))
        #expect(parent == fixture.home)
        #expect(entry.times.locationChanged == Fixture.t1)
        #expect(entry.times.lastModified == Fixture.t0)
        #expect(entry.previousParentGroup == fixture.work)
        #expect(entry.history.isEmpty)
    }

    @Test("deleting moves to a recycle bin created on first use; deleting from the bin leaves a tombstone")
    func deleteThroughRecycleBin() throws {
        let fixture = try Fixture()
        #expect(fixture.vault.meta.recycleBinUUID == nil)
        let recycled = try fixture.vault.deletingEntry(fixture.mail, at: Fixture.t1)
        let bin = try #require(recycled.meta.recycleBinUUID)
        let binGroup = try #require(recycled.root.group(bin))
        #expect(binGroup.name == "Recycle Bin")
        #expect(binGroup.enableSearching == false && binGroup.enableAutoType == false)
        #expect(recycled.meta.recycleBinChanged == Fixture.t1)
        #expect(recycled.root.entry(fixture.mail)?.parent == bin)
        #expect(recycled.deletedObjects.isEmpty)

        let purged = try recycled.deletingEntry(fixture.mail, at: Fixture.t2)
        #expect(purged.root.entry(fixture.mail) == nil)
        #expect(purged.deletedObjects == [DeletedObject(uuid: fixture.mail, deletedAt: Fixture.t2)])
    }

    @Test("a second deletion reuses the same recycle bin")
    func oneRecycleBin() throws {
        var fixture = try Fixture()
        let other: UUID
        (fixture.vault, other) = try fixture.vault.addingEntry(title: "Other", to: fixture.home, at: Fixture.t0)
        let vault = try fixture.vault.deletingEntry(fixture.mail, at: Fixture.t1).deletingEntry(other, at: Fixture.t2)
        #expect(vault.root.groups.filter { $0.name == "Recycle Bin" }.count == 1)
    }

    @Test("permanent deletion, or a disabled recycle bin, leaves a tombstone")
    func permanentDeletion() throws {
        var fixture = try Fixture()
        let permanent = try fixture.vault.deletingEntry(fixture.mail, permanently: true, at: Fixture.t1)
        #expect(permanent.deletedObjects.map(\.uuid) == [fixture.mail])
        #expect(permanent.meta.recycleBinUUID == nil)
        fixture.vault.meta.recycleBinEnabled = false
        let disabled = try fixture.vault.deletingEntry(fixture.mail, at: Fixture.t1)
        #expect(disabled.deletedObjects.map(\.uuid) == [fixture.mail])
    }

    @Test("renaming a group bumps its modification time only")
    func renameGroup() throws {
        let fixture = try Fixture()
        let renamed = try fixture.vault.renamingGroup(fixture.work, to: "Office", at: Fixture.t1)
        let group = try #require(renamed.root.group(fixture.work))
        #expect(group.name == "Office")
        #expect(group.times.lastModified == Fixture.t1)
        #expect(group.entries.map(\.uuid) == [fixture.mail])
        #expect(throws: VaultEditError.invalidName("a group needs a name")) {
            try fixture.vault.renamingGroup(fixture.work, to: "")
        }
    }

    @Test("moving a group sets LocationChanged and refuses cycles and the root")
    func moveGroup() throws {
        let fixture = try Fixture()
        let moved = try fixture.vault.movingGroup(fixture.home, to: fixture.work, at: Fixture.t1)
        let home = try #require(moved.root.group(fixture.work)?.groups.first)
        #expect(home.uuid == fixture.home)
        #expect(home.times.locationChanged == Fixture.t1)
        #expect(home.previousParentGroup == fixture.vault.root.uuid)
        #expect(throws: VaultEditError.groupIntoItself(fixture.work)) {
            try moved.movingGroup(fixture.work, to: fixture.home)
        }
        #expect(throws: VaultEditError.rootGroup) { try moved.movingGroup(moved.root.uuid, to: fixture.home) }
    }

    @Test("deleting a group recycles it; purging it tombstones the group and everything in it")
    func deleteGroup() throws {
        let fixture = try Fixture()
        let recycled = try fixture.vault.deletingGroup(fixture.work, at: Fixture.t1)
        let bin = try #require(recycled.meta.recycleBinUUID)
        #expect(recycled.root.group(bin)?.groups.map(\.uuid) == [fixture.work])
        let purged = try recycled.deletingGroup(fixture.work, at: Fixture.t2)
        #expect(Set(purged.deletedObjects.map(\.uuid)) == [fixture.work, fixture.mail])
        #expect(purged.root.group(fixture.work) == nil)
        #expect(throws: VaultEditError.rootGroup) { try purged.deletingGroup(purged.root.uuid) }
    }

    @Test("missing objects are typed errors")
    func missing() throws {
        let fixture = try Fixture()
        let nowhere = UUID()
        #expect(throws: VaultEditError.entryNotFound(nowhere)) { try fixture.vault.deletingEntry(nowhere) }
        #expect(throws: VaultEditError.groupNotFound(nowhere)) { try fixture.vault.movingEntry(fixture.mail, to: nowhere) }
        #expect(throws: VaultEditError.groupNotFound(nowhere)) { try fixture.vault.addingEntry(title: "x", to: nowhere) }
        #expect(throws: VaultEditError.invalidName("an entry needs a title")) {
            try fixture.vault.addingEntry(title: "", to: fixture.work)
        }
    }
}

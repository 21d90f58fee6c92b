import Foundation
import MyPassCore
import MyPassMerge
import Testing

@Suite("Moves with renames, changes back, second merges and the same change twice (rules 11, 14, 15)")
struct MoveAndHistoryShapeTests {
    typealias B = ShapeBase

    @Test("a group renamed on one device and moved later on the other (the move bumping its modification time, as KeePass 2 does) keeps both without a base")
    func renameThenMoveThatBumpsTime() throws {
        let base = try B.make()
        let renamer = try base.renamingGroup(B.work, to: "Job", at: B.at(10))
        var mover = try base.movingGroup(B.work, to: B.personal, at: B.at(20))
        mover = try mover.updatingGroup(B.work, at: B.at(20)) { $0.times.lastModified = B.at(20) }
        try B.everyWay(base, renamer, mover) { result, local, remote, label in
            #expect(result.vault.root.group(B.work)?.name == "Job", "\(label): the rename was lost")
            #expect(result.vault.root.pathToGroup(B.work)?.dropLast().last == B.personal, "\(label): the move was lost")
            let ancestor = label.hasSuffix("no base") ? nil : base
            #expect(B.secondMergeChanges(ancestor, result.vault, [local, remote]).isEmpty, "\(label)")
        }
    }

    @Test("one device empties the recycle bin, the other restores one entry from it and edits another there: a second merge with either input changes nothing",
          arguments: [(10, 20), (20, 10)] as [(Int64, Int64)])
    func emptiedBinAgainstRestoreAndEdit(emptiedAt: Int64, editedAt: Int64) throws {
        let base = try B.make()
        let emptier = try base.deletingEntry(B.old, permanently: true, at: B.at(emptiedAt))
            .deletingEntry(B.spare, permanently: true, at: B.at(emptiedAt))
        let restorer = try base.movingEntry(B.old, to: B.work, at: B.at(editedAt))
            .updatingEntry(B.spare, at: B.at(editedAt)) { $0.setField("Notes", .plain("kept in the bin")) }
        try B.everyWay(base, emptier, restorer, withoutBase: false) { result, local, remote, label in
            #expect(B.parent(of: B.spare, in: result.vault) == B.bin, "\(label): the edited entry left the bin")
            #expect(result.vault.root.entry(B.spare)?.0.notes == "kept in the bin", "\(label)")
            #expect(B.secondMergeChanges(base, result.vault, [local, remote]).isEmpty, "\(label)")
        }
    }

    @Test("60 KiB attachments replaced on both sides under a 100 KiB history limit: a second merge with either input trims nothing",
          arguments: [true, false])
    func replacedAttachmentsAtSizeLimit(withBase: Bool) throws {
        var base = try B.make(historyMaxSize: 100 * 1024)
        base = try base.attaching(Data(repeating: 0, count: 60 * 1024), named: "scan.pdf", to: B.mail, at: B.at(1))
        let local = try base.attaching(Data(repeating: 1, count: 60 * 1024), named: "scan.pdf", to: B.mail, replacing: true, at: B.at(10))
        let remote = try base.attaching(Data(repeating: 2, count: 60 * 1024), named: "scan.pdf", to: B.mail, replacing: true, at: B.at(20))
        try B.everyWay(base, local, remote, withBase: withBase, withoutBase: !withBase) { result, one, two, label in
            let mail = try #require(result.vault.root.entry(B.mail)?.0)
            let held = ([mail] + mail.history).compactMap { result.vault.attachmentData(named: "scan.pdf", of: $0)?.first }
            #expect(held.contains(1) && held.contains(2), "\(label): one side's bytes are lost")
            #expect(B.secondMergeChanges(withBase ? base : nil, result.vault, [one, two]).isEmpty, "\(label)")
        }
    }

    @Test("a device lowers the history limit while its history holds an item of the second the other device's losing version has: a second merge with either input trims and adds nothing (rule 15)",
          arguments: ["b-1", "b-2", "b-3", "b-4", "b-5", "b-6"])
    func loserOfTheSecondOfATrimmedItem(otherName: String) throws {
        let base = try B.make()
        let original = try #require(base.root.entry(B.mail)?.0)
        var lowered = ScenarioPlayer.modify(B.mail, in: base) { entry in
            var tagged = original.withoutHistory
            tagged.tags = ["work"]
            tagged.times.lastModified = B.at(43)
            var noted = tagged
            noted.setField("Notes", .plain("noted"))
            noted.times.lastModified = B.at(45)
            entry = noted
            entry.history = [tagged, noted]
            entry.setField("UserName", .plain("a-user"))
            entry.times.lastModified = B.at(47)
        }
        lowered.meta.historyMaxItems = 1
        lowered.meta.settingsChanged = B.at(47)
        let other = try base.updatingEntry(B.mail, at: B.at(43)) { $0.setField("UserName", .plain(otherName)) }
        try B.everyWay(base, lowered, other) { result, local, remote, label in
            let mail = try #require(result.vault.root.entry(B.mail)?.0)
            #expect(([mail] + mail.history).contains { $0.userName == otherName }, "\(label): the other device's user name is lost")
            let ancestor = label.hasSuffix("no base") ? nil : base
            #expect(B.secondMergeChanges(ancestor, result.vault, [local, remote]).isEmpty, "\(label)")
        }
    }

    @Test("the other device's losing version is older than the item its merge trimmed (history limit 0): a second merge with either input trims and adds nothing (rule 15)",
          arguments: [0, 1])
    func loserOlderThanTheTrimmedItem(limit: Int) throws {
        let base = try B.make()
        let original = try #require(base.root.entry(B.mail)?.0)
        let tagger = ScenarioPlayer.modify(B.mail, in: base) { entry in
            var noted = original.withoutHistory
            noted.setField("Notes", .plain("noted"))
            noted.times.lastModified = B.at(19)
            var later = noted
            later.setField("Notes", .plain("noted later"))
            later.times.lastModified = B.at(23)
            entry = noted
            entry.history = [noted, later]
            entry.tags = ["work"]
            entry.times.lastModified = B.at(20)
        }
        var lowered = try base.updatingEntry(B.mail, at: B.at(17)) { $0.setField("Notes", .plain("b-notes")) }
        lowered.meta.historyMaxItems = limit
        lowered.meta.settingsChanged = B.at(17)
        try B.everyWay(base, tagger, lowered) { result, local, remote, label in
            let mail = try #require(result.vault.root.entry(B.mail)?.0)
            #expect(([mail] + mail.history).contains { $0.notes == "b-notes" }, "\(label): the other device's notes are lost")
            let ancestor = label.hasSuffix("no base") ? nil : base
            #expect(B.secondMergeChanges(ancestor, result.vault, [local, remote]).isEmpty, "\(label)")
        }
    }

    @Test("without a base, one device's history holds the other's unchanged version only as a touched copy (recycled, then edited, history limit 1): a second merge with either input changes nothing (rule 15)")
    func touchedCopyInHistoryWithoutBase() throws {
        let base = try B.make()
        var editor = ScenarioPlayer.modify(B.mail, in: base) { entry in
            var touched = entry.withoutHistory
            touched.times.lastModified = B.at(10)
            touched.times.locationChanged = B.at(10)
            entry.history = [touched]
            entry.times.lastModified = B.at(20)
            entry.setField("URL", .plain("https://mail.example"))
        }
        editor.meta.historyMaxItems = 1
        editor.meta.settingsChanged = B.at(5)
        try B.everyWay(base, editor, base, withBase: false) { result, local, remote, label in
            let mail = try #require(result.vault.root.entry(B.mail)?.0)
            #expect(mail.url == "https://mail.example", "\(label): the edit was lost")
            #expect(mail.history.contains { $0.url != "https://mail.example" }, "\(label): the version before the edit is gone")
            #expect(B.secondMergeChanges(nil, result.vault, [local, remote]).isEmpty, "\(label)")
        }
    }

    @Test("both sides hold the same tags and share a history item newer than both versions (a client's clock ahead): the tags stay, and a second merge changes nothing (rule 15)")
    func sameTagsUnderNewerSharedHistoryItem() throws {
        let base = try B.make()
        let ahead = ScenarioPlayer.modify(B.mail, in: base) { entry in
            entry.times.lastModified = B.at(30)
            entry.history = [base.root.entry(B.mail)!.0.withoutHistory]
        }.root.entry(B.mail)!.0.withoutHistory
        func device(_ notes: String, at seconds: Int64) -> Vault {
            ScenarioPlayer.modify(B.mail, in: base) { entry in
                entry.history = [entry.withoutHistory, ahead]
                entry.tags = ["kept"]
                entry.setField("Notes", .plain(notes))
                entry.times.lastModified = B.at(seconds)
            }
        }
        let one = device("one", at: 10), two = device("two", at: 20)
        try B.everyWay(base, one, two) { result, local, remote, label in
            #expect(result.vault.root.entry(B.mail)?.0.tags == ["kept"], "\(label): the tags both sides hold were removed")
            let ancestor = label.hasSuffix("no base") ? nil : base
            #expect(B.secondMergeChanges(ancestor, result.vault, [local, remote]).isEmpty, "\(label)")
        }
    }

    @Test("a move back to the base's group after syncing the other device's move is a change (rule 14): the later move wins")
    func moveBackIsAChange() throws {
        let base = try B.make()
        let mover = try base.movingEntry(B.mail, to: B.personal, at: B.at(10))
        let movedBack = try mover.movingEntry(B.mail, to: B.work, at: B.at(20))
        try B.everyWay(base, mover, movedBack) { result, local, remote, label in
            #expect(B.parent(of: B.mail, in: result.vault) == B.work, "\(label): the move back was lost")
            let ancestor = label.hasSuffix("no base") ? nil : base
            #expect(B.secondMergeChanges(ancestor, result.vault, [local, remote]).isEmpty, "\(label)")
        }
    }

    @Test("a field set back to the base's value after syncing the other device's change is a change (rule 14): the later change wins")
    func fieldBackIsAChange() throws {
        let base = try B.make()
        let changed = try base.updatingEntry(B.mail, at: B.at(10)) { $0.setField("Password", .plain("mail-1")) }
        // The device that changed it edits another field later: neither side holds the other's version.
        let changer = try changed.updatingEntry(B.mail, at: B.at(30)) { $0.setField("URL", .plain("https://mail.example")) }
        let changedBack = try changed.updatingEntry(B.mail, at: B.at(20)) { $0.setField("Password", .plain("mail-0")) }
        try B.everyWay(base, changer, changedBack) { result, local, remote, label in
            let mail = result.vault.root.entry(B.mail)?.0
            #expect(mail?.text("Password") == "mail-0" && mail?.url == "https://mail.example", "\(label): the change back was lost")
            let ancestor = label.hasSuffix("no base") ? nil : base
            #expect(B.secondMergeChanges(ancestor, result.vault, [local, remote]).isEmpty, "\(label)")
        }
    }

    @Test("a merge's history holding the other device's version from before the base is no change back: the field edited since the base is kept (two devices syncing in turns)",
          arguments: [true, false])
    func staleLineInHistoryIsNoChangeBack(baseIsCertain: Bool) throws {
        let base = try B.make()
        // Round 1: A edits the user name, B sets a field; B merges A's upload.
        let a1 = try base.updatingEntry(B.mail, at: B.at(10)) { $0.setField("UserName", .plain("a-user-1")) }
        let b1 = try base.updatingEntry(B.mail, at: B.at(10)) { $0.setField("Round", .plain("1")) }
        let agreed = try VaultMerger.merge(base: base, baseIsCertain: true, local: b1, remote: a1).vault
        // Round 2: A (which never took that merge in) edits again, later than B's next edit; A's
        // sync merges the agreed version, keeping its own version before the merge in history.
        let a2 = try a1.updatingEntry(B.mail, at: B.at(30)) { $0.setField("UserName", .plain("a-user-2")) }
        let b2 = try agreed.updatingEntry(B.mail, at: B.at(20)) { $0.setField("Round", .plain("2")) }
        let uploaded = try VaultMerger.merge(base: a1, baseIsCertain: baseIsCertain, local: a2, remote: agreed).vault
        #expect(uploaded.root.entry(B.mail)?.0.text("Round") == "1")
        let result = try VaultMerger.merge(base: agreed, baseIsCertain: baseIsCertain, local: b2, remote: uploaded)
        let mail = result.vault.root.entry(B.mail)?.0
        #expect(mail?.text("Round") == "2" && mail?.userName == "a-user-2", "B's edit since the agreed version was lost: \(String(describing: mail?.text("Round")))")
        #expect(B.secondMergeChanges(agreed, result.vault, [b2, uploaded]).isEmpty)
    }

    @Test("a database name and description set back to the base's after syncing the other device's change (rule 14 for settings with a time of their own): the later change wins")
    func settingBackIsAChange() throws {
        let base = try B.make()
        var renamer = base
        renamer.meta.databaseName = "Renamed"
        renamer.meta.databaseNameChanged = B.at(10)
        renamer.meta.databaseDescription = "described"
        renamer.meta.databaseDescriptionChanged = B.at(30)
        var renamedBack = base
        renamedBack.meta.databaseName = "Renamed"
        renamedBack.meta.databaseNameChanged = B.at(10)
        renamedBack.meta.databaseName = base.meta.databaseName
        renamedBack.meta.databaseNameChanged = B.at(20)
        try B.everyWay(base, renamer, renamedBack, withoutBase: false) { result, local, remote, label in
            #expect(result.vault.meta.databaseName == base.meta.databaseName, "\(label): the name set back was lost")
            #expect(result.vault.meta.databaseDescription == "described", "\(label)")
            #expect(B.secondMergeChanges(base, result.vault, [local, remote]).isEmpty, "\(label)")
        }
    }

    @Test("the same value set on both devices is one change: no history item for it, in any merge", arguments: ["Password", "URL", "UserName"])
    func sameChangeOnBothAddsNoHistory(field: String) throws {
        let base = try B.make()
        let one = try base.updatingEntry(B.mail, at: B.at(10)) { $0.setField(field, .plain("same-new")) }
        let two = try base.updatingEntry(B.mail, at: B.at(20)) { $0.setField(field, .plain("same-new")) }
        try B.everyWay(base, one, two) { result, local, remote, label in
            let mail = try #require(result.vault.root.entry(B.mail)?.0)
            #expect(mail.text(field) == "same-new" && mail.history.count == 1, "\(label): \(mail.history.count) history items")
            #expect(!result.changes.contains { $0.kind == .historyMerged }, "\(label)")
            let ancestor = label.hasSuffix("no base") ? nil : base
            #expect(B.secondMergeChanges(ancestor, result.vault, [local, remote]).isEmpty, "\(label)")
        }
    }
}

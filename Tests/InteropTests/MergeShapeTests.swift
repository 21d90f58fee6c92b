import Foundation
import MyPassCore
import MyPassMerge
import Testing

/// The merge shapes that real clients make (MERGE.md rules 4-7, 10, 11): two devices edit one base
/// with pykeepass and keepassxc-cli, and the merge must keep every value, both directions, with and
/// without a base where the rule applies; merging the result again changes nothing.
@Suite("Merge shapes made by pykeepass and keepassxc-cli", .serialized)
struct MergeShapeTests {
    typealias V = ShapeVault

    /// The base on laptop and phone, edited by `edit`; the devices are removed afterwards.
    func devices(historyMaxItems: Int = 10, _ edit: (ClientDevices) throws -> Void, check: (ClientDevices) throws -> Void) throws {
        let devices = try ClientDevices.make(try V.make(historyMaxItems: historyMaxItems), devices: ["laptop", "phone"])
        defer { devices.remove() }
        try edit(devices)
        try check(devices)
    }

    func job(_ device: String, after seconds: Int64, _ ops: [[String: Any]]) -> ClientDevices.PyJob {
        ClientDevices.PyJob(device: device, clock: V.clientsStart.adding(seconds), ops: ops)
    }

    @Test("group custom data: an item added on each side and one changed on one side all survive")
    func groupCustomDataPerKey() throws {
        try devices({ devices in
            try devices.pykeepass([
                job("laptop", after: 0, [["op": "groupCustomData", "group": V.internet.uuidString, "key": "gA", "value": "from laptop"]]),
                job("phone", after: 5, [["op": "groupCustomData", "group": V.internet.uuidString, "key": "gB", "value": "from phone"],
                                        ["op": "groupCustomData", "group": V.internet.uuidString, "key": "gC", "value": "1"]]),
            ])
        }, check: { devices in
            try EveryWay(devices: devices).check { result, label in
                let data = Dictionary(uniqueKeysWithValues: (result.vault.findGroup(V.internet)?.customData ?? []).map { ($0.key, $0.value) })
                #expect(data == ["gA": "from laptop", "gB": "from phone", "gC": "1"], "\(label)")
            }
        })
    }

    @Test("a conflicting field takes the value of the side that changed that field later, not of the newer entry")
    func fieldChangedLaterWins() throws {
        try devices({ devices in
            // Laptop: user name at +1, password at +3. Phone: password at +2, URL at +4 (the newer entry).
            try devices.pykeepass([
                job("laptop", after: 0, [["op": "setField", "entry": V.github.uuidString, "key": "UserName", "value": "alice-laptop"],
                                         ["op": "setField", "entry": V.github.uuidString, "key": "Password", "value": "pw-laptop", "after": 2]]),
                job("phone", after: 1, [["op": "setField", "entry": V.github.uuidString, "key": "Password", "value": "pw-phone"],
                                        ["op": "setField", "entry": V.github.uuidString, "key": "URL", "value": "https://phone.example", "after": 2]]),
            ])
        }, check: { devices in
            try EveryWay(devices: devices).check { result, label in
                let github = try #require(result.vault.find(V.github)?.entry, "\(label)")
                #expect(github.text("Password") == "pw-laptop", "\(label): the later password change is not current")
                #expect(github.userName == "alice-laptop" && github.url == "https://phone.example", "\(label)")
                #expect(github.history.contains { $0.text("Password") == "pw-phone" }, "\(label): the phone's password is not in history")
            }
        })
    }

    @Test("a group renamed on one device and later moved on the other keeps both the name and the move")
    func renameAndLaterMove() throws {
        try devices({ devices in
            try devices.pykeepass([
                job("phone", after: 0, [["op": "renameGroup", "group": V.internet.uuidString, "name": "Web"]]),
                job("laptop", after: 5, [["op": "moveGroup", "group": V.internet.uuidString, "to": V.bank.uuidString]]),
            ])
        }, check: { devices in
            try EveryWay(devices: devices).check { result, label in
                #expect(result.vault.findGroup(V.internet)?.name == "Web", "\(label): the rename was lost")
                #expect(result.vault.parent(ofGroup: V.internet) == V.bank, "\(label): the move was lost")
            }
        })
    }

    @Test("a permanent deletion (keepassxc-cli rm twice) that never saw an edit recycles the edited entry with a base; without one the later deletion wins")
    func unseenEditSurvivesPermanentDeletion() throws {
        try devices({ devices in
            try devices.pykeepass([job("phone", after: 0, [
                ["op": "setField", "entry": V.github.uuidString, "key": "Password", "value": "pw-phone"],
                ["op": "setField", "entry": V.github.uuidString, "key": "Notes", "value": "phone notes"],
            ])])
            try devices.keepassxc("laptop", "rm", [], "Internet/GitHub")
            try devices.keepassxc("laptop", "rm", [], "Recycle Bin/GitHub")
        }, check: { devices in
            #expect(try devices.open("laptop").deletedObjects.contains { $0.uuid == V.github }, "keepassxc-cli wrote no tombstone")
            try EveryWay(devices: devices).check(withoutBase: false) { result, label in
                let kept = try #require(result.vault.find(V.github), "\(label): the edit was destroyed")
                #expect(kept.inRecycleBin && kept.entry.notes == "phone notes" && kept.entry.text("Password") == "pw-phone", "\(label)")
                #expect(!result.vault.deletedObjects.contains { $0.uuid == V.github }, "\(label): a live entry is listed as deleted")
            }
            try EveryWay(devices: devices).check(withBase: false) { result, label in
                #expect(result.vault.find(V.github) == nil, "\(label): without an ancestor the later deletion decides")
            }
        })
    }

    @Test("a permanent deletion that saw the version it deleted still deletes, with and without a base")
    func seenVersionIsDeleted() throws {
        try devices({ devices in
            try devices.pykeepass([job("phone", after: 0, [["op": "setField", "entry": V.chase.uuidString, "key": "Notes", "value": "other entry"]])])
            try devices.keepassxc("laptop", "rm", [], "Internet/GitHub")
            try devices.keepassxc("laptop", "rm", [], "Recycle Bin/GitHub")
        }, check: { devices in
            try EveryWay(devices: devices).check { result, label in
                #expect(result.vault.find(V.github) == nil, "\(label): the deleted entry came back")
                #expect(result.vault.find(V.chase)?.entry.notes == "other entry", "\(label)")
            }
        })
    }

    @Test("auto-type: a window association added on one device and the default sequence changed later on the other are both current")
    func autoTypeInParts() throws {
        try devices({ devices in
            try devices.pykeepass([
                job("laptop", after: 0, [["op": "autoTypeWindow", "entry": V.github.uuidString, "window": "Firefox - GitHub*", "value": "{USERNAME}{ENTER}"]]),
                job("phone", after: 5, [["op": "autoTypeSequence", "entry": V.github.uuidString, "value": "{PASSWORD}{ENTER}"]]),
            ])
        }, check: { devices in
            try EveryWay(devices: devices).check { result, label in
                let autoType = try #require(result.vault.find(V.github)?.entry.autoType, "\(label)")
                #expect(autoType.defaultSequence == "{PASSWORD}{ENTER}", "\(label)")
                #expect(autoType.associations.map(\.window) == ["Firefox - GitHub*"], "\(label): the association is only in history")
            }
        })
    }

    @Test("pykeepass deletions without a tombstone: deleted with a certain base (and the result carries the tombstone), kept with a remembered one or none")
    func certainBaseDeletesDroppedObjects() throws {
        try devices({ devices in
            try devices.pykeepass([
                job("laptop", after: 0, [["op": "deleteEntry", "entry": V.chase.uuidString], ["op": "deleteGroup", "group": V.archive.uuidString]]),
                job("phone", after: 2, [["op": "setField", "entry": V.github.uuidString, "key": "Notes", "value": "phone notes"]]),
            ])
        }, check: { devices in
            #expect(try devices.open("laptop").deletedObjects.isEmpty, "pykeepass wrote a tombstone")
            try EveryWay(devices: devices).check(withoutBase: false) { result, label in
                for gone in [V.chase, V.old] {
                    #expect(result.vault.find(gone) == nil, "\(label): an entry dropped from the certain base came back")
                    #expect(result.vault.deletedObjects.contains { $0.uuid == gone }, "\(label): no tombstone travels")
                }
                #expect(result.vault.findGroup(V.archive) == nil && result.vault.deletedObjects.contains { $0.uuid == V.archive }, "\(label)")
                #expect(result.vault.find(V.github)?.entry.notes == "phone notes", "\(label)")
            }
            let base = try devices.open("base"), laptop = try devices.open("laptop"), phone = try devices.open("phone")
            for ancestor in [base, nil] as [Vault?] {
                for (local, remote) in [(laptop, phone), (phone, laptop)] {
                    let result = try VaultMerger.merge(base: ancestor, baseIsCertain: false, local: local, remote: remote)
                    #expect(result.vault.find(V.chase) != nil && result.vault.find(V.old) != nil, "a remembered base or none: absence is not deletion")
                }
            }
        })
    }

    @Test("KeePassXC's _LAST_MODIFIED custom data alone changes nothing, adds no history and no same-second warning")
    func bookkeepingChangesNothing() throws {
        try devices({ devices in
            try devices.pykeepass([
                job("laptop", after: 0, [["op": "entryCustomData", "entry": V.github.uuidString, "key": "_LAST_MODIFIED", "value": "Thu Dec 3 10:00:00 2026 GMT"],
                                         ["op": "groupCustomData", "group": V.internet.uuidString, "key": "_LAST_MODIFIED", "value": "Thu Dec 3 10:00:00 2026 GMT"]]),
                job("phone", after: 0, [["op": "entryCustomData", "entry": V.github.uuidString, "key": "_LAST_MODIFIED", "value": "Thu Dec 3 10:00:09 2026 GMT"]]),
            ])
        }, check: { devices in
            try EveryWay(devices: devices).check { result, label in
                #expect(result.changes.isEmpty, "\(label): \(result.changes.map { "\($0.kind) \($0.title) \($0.fields)" })")
                #expect(result.vault.find(V.github)?.entry.history.isEmpty == true, "\(label): history was added")
                #expect(result.warnings.isEmpty, "\(label): \(result.warnings)")
            }
        })
    }

    @Test("HistoryMaxItems 0 or 1: the version that lost a conflict survives the merge that made it", arguments: [0, 1])
    func conflictLoserSurvivesHistoryLimit(limit: Int) throws {
        try devices(historyMaxItems: limit, { devices in
            try devices.pykeepass([
                job("laptop", after: 0, [["op": "setField", "entry": V.github.uuidString, "key": "Password", "value": "pw-laptop"]]),
                job("phone", after: 3, [["op": "setField", "entry": V.github.uuidString, "key": "Password", "value": "pw-phone"]]),
            ])
        }, check: { devices in
            try EveryWay(devices: devices).check { result, label in
                let github = try #require(result.vault.find(V.github)?.entry, "\(label)")
                #expect(github.text("Password") == "pw-phone", "\(label)")
                #expect(github.history.contains { $0.text("Password") == "pw-laptop" }, "\(label): the losing version was trimmed")
            }
        })
    }

    @Test("a file that lists a live entry among its own deleted objects keeps the entry on the next merge")
    func liveEntryListedAsDeletedSurvives() throws {
        try devices({ devices in
            try devices.pykeepass([
                job("laptop", after: 0, [["op": "listLiveAsDeleted", "entry": V.github.uuidString]]),
                job("phone", after: 2, [["op": "setField", "entry": V.chase.uuidString, "key": "Notes", "value": "phone notes"]]),
            ])
        }, check: { devices in
            #expect(try devices.open("laptop").deletedObjects.contains { $0.uuid == V.github }, "the file does not list the live entry")
            try EveryWay(devices: devices).check { result, label in
                #expect(result.vault.find(V.github) != nil, "\(label): the live entry was lost")
                #expect(!result.vault.deletedObjects.contains { $0.uuid == V.github }, "\(label): a live entry is listed as deleted")
            }
        })
    }
}

/// Shapes users reported (MERGE.md rules 7, 11, 14, 15), made by the real clients.
@Suite("Reported merge shapes made by pykeepass and keepassxc-cli", .serialized)
struct ReportedMergeShapeTests {
    typealias V = ShapeVault
    let shapes = MergeShapeTests()

    @Test("keepassxc-cli deletes an entry for good, pykeepass edits it later: with and without a base it stays in its group, restored")
    func editAfterPermanentDeletion() throws {
        try shapes.devices({ devices in
            try devices.keepassxc("laptop", "rm", [], "Internet/GitHub")
            try devices.keepassxc("laptop", "rm", [], "Recycle Bin/GitHub")
            // The phone's edit comes after the laptop's deletion (keepassxc-cli uses the wall clock).
            try devices.pykeepass([ClientDevices.PyJob(device: "phone", clock: Timestamp.now().adding(5), ops: [
                ["op": "setField", "entry": V.github.uuidString, "key": "Notes", "value": "still used"],
            ])])
        }, check: { devices in
            try EveryWay(devices: devices).check { result, label in
                let kept = try #require(result.vault.find(V.github), "\(label): the edit was destroyed")
                #expect(!kept.inRecycleBin && result.vault.root.entry(V.github)?.1 == V.internet, "\(label): not where the edit left it")
                #expect(kept.entry.notes == "still used", "\(label)")
                #expect(!result.vault.deletedObjects.contains { $0.uuid == V.github }, "\(label)")
            }
        })
    }

    @Test("a group renamed on one device and moved later on the other by a client that bumps its time: both kept without a base")
    func renameThenTouchingMove() throws {
        try shapes.devices({ devices in
            try devices.pykeepass([
                shapes.job("phone", after: 0, [["op": "renameGroup", "group": V.internet.uuidString, "name": "Web"]]),
                shapes.job("laptop", after: 5, [["op": "moveGroup", "group": V.internet.uuidString, "to": V.bank.uuidString, "touch": true]]),
            ])
        }, check: { devices in
            try EveryWay(devices: devices).check { result, label in
                #expect(result.vault.findGroup(V.internet)?.name == "Web", "\(label): the rename was lost")
                #expect(result.vault.parent(ofGroup: V.internet) == V.bank, "\(label): the move was lost")
            }
        })
    }

    @Test("an entry moved back to its group after syncing the other device's move: the move back wins (rule 14)")
    func moveBackAfterSync() throws {
        try shapes.devices({ devices in
            try devices.pykeepass([shapes.job("laptop", after: 0, [["op": "moveEntry", "entry": V.github.uuidString, "group": V.bank.uuidString]])])
            try FileManager.default.removeItem(at: devices.path("phone"))
            try FileManager.default.copyItem(at: devices.path("laptop"), to: devices.path("phone"))
            try devices.pykeepass([shapes.job("phone", after: 5, [["op": "moveEntry", "entry": V.github.uuidString, "group": V.internet.uuidString]])])
        }, check: { devices in
            try EveryWay(devices: devices).check { result, label in
                #expect(result.vault.root.entry(V.github)?.1 == V.internet, "\(label): the move back was lost")
            }
        })
    }

    @Test("the same password, URL and user name set on both devices add no history item")
    func sameChangeOnBoth() throws {
        try shapes.devices({ devices in
            let ops: [[String: Any]] = [["op": "setField", "entry": V.github.uuidString, "key": "Password", "value": "same-pw"],
                                        ["op": "setField", "entry": V.chase.uuidString, "key": "URL", "value": "https://same.example"],
                                        ["op": "setField", "entry": V.old.uuidString, "key": "UserName", "value": "same-user"]]
            try devices.pykeepass([shapes.job("laptop", after: 0, ops), shapes.job("phone", after: 7, ops)])
        }, check: { devices in
            try EveryWay(devices: devices).check { result, label in
                for id in [V.github, V.chase, V.old] {
                    #expect(result.vault.find(id)?.entry.history.count == 1, "\(label): a copy of the same change went to history")
                }
            }
        })
    }
}

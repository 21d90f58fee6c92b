import Foundation
import MyPassCore
import MyPassMerge
import Testing

/// One base vault (one entry) and edits made on it at given seconds after it, for cases where the
/// order of merges or the same second decides.
struct SmallVault {
    static let root = UUID(uuidString: "D0000000-0000-0000-0000-0000000000FF")!
    static let group = UUID(uuidString: "D0000000-0000-0000-0000-000000000001")!
    static let entry = UUID(uuidString: "E0000000-0000-0000-0000-000000000001")!
    static let start = Timestamp(iso8601: "2026-05-01T10:00:00Z")!

    static func base(historyMaxItems: Int = 10) throws -> Vault {
        var vault = Vault.empty(name: "small", at: start)
        vault.root.uuid = root
        vault.meta.historyMaxItems = historyMaxItems
        vault = try vault.addingGroup(named: "Sites", to: root, at: start, uuid: group).vault
        return try vault.addingEntry(title: "Site", userName: "user", password: "pw", to: group, at: start, uuid: entry).vault
    }

    static func at(_ seconds: Int64) -> Timestamp { Timestamp(secondsSinceYearOne: start.secondsSinceYearOne + seconds) }

    /// `vault` with field `key` of the entry set to `value`, `seconds` after the base.
    static func setting(_ key: String, _ value: String, at seconds: Int64, in vault: Vault) throws -> Vault {
        try vault.updatingEntry(entry, at: at(seconds)) { $0.setField(key, .plain(value)) }
    }

    static func merge(_ base: Vault?, _ local: Vault, _ remote: Vault) throws -> MergeResult {
        try VaultMerger.merge(base: base, baseIsCertain: base != nil, local: local, remote: remote)
    }

    /// The entry's current version in `vault`.
    static func current(_ vault: Vault) -> Entry? { vault.root.entry(entry)?.0 }

    /// Three devices' versions merged (against `base`) in each of `orders` (indexes into `[a, b, c]`):
    /// the first two, then the third.
    static func mergedInOrders(_ base: Vault?, _ a: Vault, _ b: Vault, _ c: Vault,
                               orders: [[Int]] = [[0, 1, 2], [2, 0, 1], [1, 2, 0]]) throws -> [Vault] {
        let devices = [a, b, c]
        return try orders.map { order in
            try merge(base, try merge(base, devices[order[0]], devices[order[1]]).vault, devices[order[2]]).vault
        }
    }

    /// What merging `merged` again with each of `inputs` changed, described (empty when nothing).
    static func changesMergedAgain(_ base: Vault?, _ merged: Vault, with inputs: [Vault]) throws -> [String] {
        try inputs.flatMap { input in try merge(base, merged, input).changes.map { "\($0.kind) \($0.title) \($0.fields)" } }
    }
}

@Suite("Merges in any order and in the same second")
struct MergeOrderTests {
    /// An entry's field is timed by its own history (above); a Meta setting without a `*Changed` time of
    /// its own by the vault's one `SettingsChanged`. a protects URLs at 30 s, b sets the maintenance
    /// days at 10 s, c at 20 s: c's days are the later change. a merged with b holds b's days under
    /// a's 30 s; the days keep b's 10 s (`SettingTimes`), so c's still win in every order (the
    /// generated scripts' seeds 1160, 3365 and 3781, with a format conversion as a's change).
    @Test("a setting timed by SettingsChanged, changed on two devices, a third changing another later: every order agrees")
    func settingTimedBySettingsChanged() throws {
        let base = try SmallVault.base()
        var a = base, b = base, c = base
        a.meta.memoryProtection.protectURL.toggle()
        a.meta.settingsChanged = SmallVault.at(30)
        b.meta.maintenanceHistoryDays = 100
        b.meta.settingsChanged = SmallVault.at(10)
        c.meta.maintenanceHistoryDays = 200
        c.meta.settingsChanged = SmallVault.at(20)
        let days = try SmallVault.mergedInOrders(base, a, b, c).map(\.meta.maintenanceHistoryDays)
        #expect(days == [200, 200, 200], "orders end with \(days)")
    }

    @Test("a field changed earlier on a device loses to a later change made on another, after an intermediate merge", arguments: [true, false])
    func fieldChangeTimeThroughAMerge(withBase: Bool) throws {
        let base = try SmallVault.base()
        let a = try SmallVault.setting("Notes", "from a", at: 10, in: base)
        let b = try SmallVault.setting("URL", "from b", at: 20, in: base)
        let c = try SmallVault.setting("Notes", "from c", at: 15, in: base)
        let ancestor = withBase ? base : nil
        let abThenC = try SmallVault.merge(ancestor, try SmallVault.merge(ancestor, a, b).vault, c).vault
        let caThenB = try SmallVault.merge(ancestor, try SmallVault.merge(ancestor, c, a).vault, b).vault
        #expect(SmallVault.current(abThenC)?.notes == "from c")
        #expect(SmallVault.current(caThenB)?.notes == "from c")
        #expect(SmallVault.current(abThenC)?.url == "from b")
    }

    @Test("the same field set in the same second on two devices: the same value wins in every order and direction", arguments: [true, false])
    func sameSecondFieldTieBreak(withBase: Bool) throws {
        let base = try SmallVault.base()
        // a also changes another field later, so its entry is the newer one: that must not decide Notes.
        let a = try SmallVault.setting("URL", "later on a", at: 12, in: try SmallVault.setting("Notes", "n-a", at: 10, in: base))
        let b = try SmallVault.setting("Password", "pw-b", at: 20, in: base)
        let c = try SmallVault.setting("Notes", "n-c", at: 10, in: base)
        let ancestor = withBase ? base : nil
        let notes = try SmallVault.mergedInOrders(ancestor, a, b, c, orders: [[0, 1, 2], [2, 0, 1], [1, 2, 0], [2, 1, 0]])
            .map { SmallVault.current($0)?.notes }
        #expect(Set(notes).count == 1, "\(notes)")
        #expect(try SmallVault.current(SmallVault.merge(ancestor, a, c).vault)?.notes == SmallVault.current(SmallVault.merge(ancestor, c, a).vault)?.notes)
        // Both values are kept: the other one in history.
        let merged = try SmallVault.merge(ancestor, try SmallVault.merge(ancestor, a, b).vault, c).vault
        let kept = Set(([SmallVault.current(merged)!] + SmallVault.current(merged)!.history).map(\.notes))
        #expect(kept.isSuperset(of: ["n-a", "n-c"]))
    }

    @Test("with a history limit of zero or one, the two versions a merge combines stay in history: merging again with either changes nothing",
          arguments: [true, false], [0, 1])
    func combinedVersionsSurviveHistoryLimit(withBase: Bool, limit: Int) throws {
        let base = try SmallVault.base(historyMaxItems: limit)
        let local = try SmallVault.setting("Notes", "later", at: 18, in: base)
        let remote = try SmallVault.setting("UserName", "earlier", at: 14, in: base)
        let ancestor = withBase ? base : nil
        let merged = try SmallVault.merge(ancestor, local, remote)
        for input in [local, remote] {
            let again = try SmallVault.merge(ancestor, merged.vault, input)
            #expect(again.changes.isEmpty, "\(again.changes.map { "\($0.kind) \($0.fields)" })")
            #expect(SmallVault.current(again.vault)?.history.count == SmallVault.current(merged.vault)?.history.count)
        }
    }

    @Test("a setting changed on both sides without a newer change time: the same value in both directions", arguments: [true, false])
    func sameTimeSettingTieBreak(withBase: Bool) throws {
        let base = try SmallVault.base()
        var local = base, remote = base
        local.meta.historyMaxItems = 0  // as pykeepass writes it: SettingsChanged left as it was
        remote.meta.historyMaxItems = 30
        local.meta.customData = [CustomDataItem(key: "plugin", value: "local")]
        remote.meta.customData = [CustomDataItem(key: "plugin", value: "remote")]
        let ancestor = withBase ? base : nil
        let forward = try SmallVault.merge(ancestor, local, remote).vault, backward = try SmallVault.merge(ancestor, remote, local).vault
        #expect(forward.meta == backward.meta)
        #expect(forward.meta.customData.map(\.value) == ["remote"])
    }

    @Test("with a certain base and no history kept, an auto-type window added on one device survives every merge order")
    func certainBaseWithoutHistory() throws {
        let base = try SmallVault.base(historyMaxItems: 0)
        let a = try base.updatingEntry(SmallVault.entry, at: SmallVault.at(10)) {
            $0.autoType.associations.append(AutoType.Association(window: "Login - Site", keystrokeSequence: "{USERNAME}"))
        }
        let b = try SmallVault.setting("UserName", "from b", at: 10, in: base)
        let c = try SmallVault.setting("Notes", "from c", at: 12, in: base)
        for (first, second, third) in [(a, b, c), (c, a, b), (b, c, a)] {
            let merged = try SmallVault.merge(base, try SmallVault.merge(base, first, second).vault, third).vault
            let entry = SmallVault.current(merged)
            #expect(entry?.autoType.associations.map(\.window) == ["Login - Site"])
            #expect(entry?.userName == "from b")
            #expect(entry?.notes == "from c")
        }
    }

    @Test("KeePassXC's bookkeeping item in the vault's custom data alone is no change, the same from both directions")
    func metaBookkeepingIsNoChange() throws {
        let base = try SmallVault.base()
        var local = base, remote = base
        local.meta.customData = [CustomDataItem(key: CustomDataItem.bookkeepingKey, value: "Thu Dec 3 10:00:00 2026 GMT")]
        remote.meta.customData = [CustomDataItem(key: CustomDataItem.bookkeepingKey, value: "Thu Dec 3 11:00:00 2026 GMT")]
        let forward = try SmallVault.merge(base, local, remote), backward = try SmallVault.merge(base, remote, local)
        #expect(forward.changes.isEmpty && backward.changes.isEmpty, "\(forward.changes) \(backward.changes)")
        #expect(forward.vault.meta == backward.vault.meta)
    }

    /// Reduced from generated script seed 39: pykeepass creates a recycle bin without setting RecycleBinChanged.
    @Test("a recycle bin created on one side without a newer change time: the bin is kept in both directions", arguments: [true, false])
    func recycleBinWithoutChangeTime(withBase: Bool) throws {
        let base = try SmallVault.base()
        var recycled = try base.deletingEntry(SmallVault.entry, at: SmallVault.at(10))
        recycled.meta.recycleBinChanged = base.meta.recycleBinChanged
        let other = try SmallVault.setting("URL", "changed elsewhere", at: 12, in: base)
        let ancestor = withBase ? base : nil
        for (local, remote) in [(recycled, other), (other, recycled)] {
            let merged = try SmallVault.merge(ancestor, local, remote).vault
            #expect(merged.meta.recycleBinUUID != nil && merged.meta.recycleBinUUID == recycled.meta.recycleBinUUID)
            #expect(merged.find(SmallVault.entry)?.inRecycleBin == true)
        }
    }

    /// Reduced from generated script seed 102: two devices add an entry custom data item each, and the
    /// merge orders list them in different orders.
    @Test("entry custom data items added on two devices: every merge order has the same content")
    func customDataFromTwoDevicesInAnyOrder() throws {
        let base = try SmallVault.base()
        let a = try base.updatingEntry(SmallVault.entry, at: SmallVault.at(11)) { $0.customData.append(CustomDataItem(key: "from a", value: "1")) }
        let b = try base.updatingEntry(SmallVault.entry, at: SmallVault.at(10)) { $0.customData.append(CustomDataItem(key: "from b", value: "2")) }
        let c = try SmallVault.setting("Password", "from c", at: 12, in: base)
        let results = try [(a, b, c), (c, a, b), (b, c, a)].map { first, second, third in
            try SmallVault.merge(base, try SmallVault.merge(base, first, second).vault, third).vault
        }
        for result in results {
            #expect(Set(SmallVault.current(result)?.customData.map(\.key) ?? []) == ["from a", "from b"])
            #expect(VaultDiff.diff(from: results[0], to: result).filter { $0.kind == .updated }.isEmpty)
        }
    }

    @Test("at a history limit of 1 the merge keeps both versions it combined; merged again with either input it changes nothing")
    func resultAtTheHistoryLimitIsAFixedPoint() throws {
        let base = try SmallVault.base(historyMaxItems: 1)
        // Each device edits twice (pykeepass keeps every history item), then the limit applies.
        let a = try SmallVault.setting("Notes", "a2", at: 12, in: try SmallVault.setting("Notes", "a1", at: 10, in: base))
        let b = try SmallVault.setting("URL", "b2", at: 13, in: try SmallVault.setting("URL", "b1", at: 11, in: base))
        for ancestor in [base, nil] as [Vault?] {
            let merged = try SmallVault.merge(ancestor, a, b).vault
            let entry = try #require(SmallVault.current(merged))
            #expect(entry.notes == "a2" && entry.url == "b2")
            for input in [a, b] {
                let again = try SmallVault.merge(ancestor, merged, input)
                #expect(again.changes.isEmpty, "\(again.changes.map { "\($0.kind) \($0.fields)" })")
                #expect(SmallVault.current(again.vault)?.history.count == entry.history.count)
            }
        }
    }

    @Test("a result that holds an input's version is not merged again field by field: no conflict is reported a second time", arguments: [true, false])
    func resultHoldingTheInputReportsNothing(withBase: Bool) throws {
        let base = try SmallVault.base()
        // a sets the user name, then the icon in the same second; b sets the icon a second later.
        let a = try SmallVault.setting("UserName", "from a", at: 10, in: base)
        let aBoth = try a.updatingEntry(SmallVault.entry, at: SmallVault.at(10)) { $0.iconID = 33 }
        let b = try base.updatingEntry(SmallVault.entry, at: SmallVault.at(11)) { $0.iconID = 17 }
        let ancestor = withBase ? base : nil
        let merged = try SmallVault.merge(ancestor, aBoth, b).vault
        #expect(SmallVault.current(merged)?.iconID == 17 && SmallVault.current(merged)?.userName == "from a")
        let again = try SmallVault.changesMergedAgain(ancestor, merged, with: [aBoth, b])
        #expect(again.isEmpty, "\(again)")
    }

    @Test("window associations added on three devices: the same list, in the same order, whichever order they merge in")
    func associationOrderIndependentOfMergeOrder() throws {
        let base = try SmallVault.base()
        func adding(_ windows: [String], at seconds: Int64) throws -> Vault {
            try base.updatingEntry(SmallVault.entry, at: SmallVault.at(seconds)) { entry in
                for window in windows { entry.autoType.associations.append(AutoType.Association(window: window, keystrokeSequence: "{PASSWORD}")) }
            }
        }
        let a = try adding(["Zeta", "Alpha"], at: 10), b = try adding(["Mid"], at: 11), c = try adding(["Beta"], at: 12)
        let lists = try SmallVault.mergedInOrders(base, a, b, c).map { SmallVault.current($0)?.autoType.associations.map(\.window) }
        #expect(Set(lists.map { $0 ?? [] }).count == 1, "\(lists)")
        #expect(Set(lists[0] ?? []) == ["Zeta", "Alpha", "Mid", "Beta"])
        // A merge that adds nothing keeps the device's own order.
        #expect(SmallVault.current(try SmallVault.merge(base, a, base).vault)?.autoType.associations.map(\.window) == ["Zeta", "Alpha"])
    }

    @Test("a recycle bin a merge made for an unseen deletion gives way to the bin a device made, in every order")
    func mergeMadeBinGivesWay() throws {
        var base = try SmallVault.base()
        base = try base.addingEntry(title: "Other", to: SmallVault.group, at: SmallVault.start,
                                    uuid: UUID(uuidString: "E0000000-0000-0000-0000-000000000002")!).vault
        let other = UUID(uuidString: "E0000000-0000-0000-0000-000000000002")!
        // a deletes the entry for good; b edits it (a deletion that never saw the edit: recycled);
        // c sends another entry to its own new recycle bin.
        let a = try base.deletingEntry(SmallVault.entry, permanently: true, at: SmallVault.at(20))
        let b = try SmallVault.setting("Notes", "edited", at: 10, in: base)
        let c = try base.deletingEntry(other, at: SmallVault.at(30))
        let results = try SmallVault.mergedInOrders(base, a, b, c)
        let bins = results.map(\.meta.recycleBinUUID)
        #expect(Set(bins).count == 1 && bins[0] == c.meta.recycleBinUUID, "\(bins)")
        for result in results {
            #expect(VaultDiff.sameContent(result, results[0]))
            #expect(result.root.entry(SmallVault.entry).map { result.isInRecycleBin(group: $0.parent) } == true)
        }
    }

    /// a saves the entry later than both edits without changing a property (pykeepass moves it and
    /// bumps its time, with or without a history item for the unchanged version); b and c set Notes,
    /// c later. A merge of a with one of them holds that one's notes under a's later time: the
    /// version that set them must stay in its history, or the notes look set at a's time and beat
    /// c's later change in one order only (the generated scripts' seeds 9102 and 8283).
    @Test("a device saves the entry later without a change, two others set a field: the later setting wins in every order",
          arguments: [false, true])
    func touchedLaterWithoutChange(touchKeepsHistory: Bool) throws {
        let base = try SmallVault.base()
        var a = ScenarioPlayer.modify(SmallVault.entry, in: base) { entry in
            entry.history = touchKeepsHistory ? [entry.withoutHistory] : []
            entry.times.lastModified = SmallVault.at(30)
        }
        a = try a.movingEntry(SmallVault.entry, to: SmallVault.root, at: SmallVault.at(25))
        let b = try SmallVault.setting("Notes", "from b", at: 11, in: base)
        let c = try SmallVault.setting("Notes", "from c", at: 14, in: base)
        let orders = [[0, 1, 2], [2, 0, 1], [1, 2, 0], [0, 2, 1], [1, 0, 2], [2, 1, 0]]
        let results = try SmallVault.mergedInOrders(base, a, b, c, orders: orders)
        let notes = results.map { SmallVault.current($0)?.notes }
        #expect(notes == Array(repeating: "from c", count: orders.count), "orders end with \(notes)")
        for result in results {
            let entry = try #require(SmallVault.current(result))
            #expect(([entry] + entry.history).contains { $0.notes == "from b" }, "b's notes are lost")
            #expect(try SmallVault.changesMergedAgain(base, result, with: [a, b, c]).isEmpty)
        }
        for (one, two) in [(a, b), (b, a), (a, c), (c, a)] {
            let merged = try SmallVault.merge(base, one, two).vault
            #expect(try SmallVault.changesMergedAgain(base, merged, with: [one, two]).isEmpty)
        }
    }
}

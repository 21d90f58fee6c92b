import Foundation
import MyPassCore
import MyPassMerge
import Testing

/// A base with groups Work, Personal and Bank (Chase), an entry Mail in Work and a recycle bin
/// holding Old and Spare; edits at given seconds after it.
enum ShapeBase {
    static let root = UUID(uuidString: "C0000000-0000-0000-0000-0000000000FF")!
    static let work = UUID(uuidString: "C0000000-0000-0000-0000-000000000001")!
    static let personal = UUID(uuidString: "C0000000-0000-0000-0000-000000000002")!
    static let bank = UUID(uuidString: "C0000000-0000-0000-0000-000000000003")!
    static let bin = UUID(uuidString: "C0000000-0000-0000-0000-000000000004")!
    static let mail = UUID(uuidString: "CE000000-0000-0000-0000-000000000001")!
    static let chase = UUID(uuidString: "CE000000-0000-0000-0000-000000000002")!
    static let old = UUID(uuidString: "CE000000-0000-0000-0000-000000000003")!
    static let spare = UUID(uuidString: "CE000000-0000-0000-0000-000000000004")!
    static let start = Timestamp(iso8601: "2026-06-01T10:00:00Z")!

    static func at(_ seconds: Int64) -> Timestamp { Timestamp(secondsSinceYearOne: start.secondsSinceYearOne + seconds) }

    static func make(historyMaxItems: Int = 10, historyMaxSize: Int64 = -1) throws -> Vault {
        var vault = Vault.empty(name: "shapes", at: start)
        vault.root.uuid = root
        vault.meta.historyMaxItems = historyMaxItems
        vault.meta.historyMaxSize = historyMaxSize
        for (name, id) in [("Work", work), ("Personal", personal), ("Bank", bank), ("Recycle Bin", bin)] {
            vault = try vault.addingGroup(named: name, to: root, at: start, uuid: id).vault
        }
        vault.meta.recycleBinUUID = bin
        vault.meta.recycleBinChanged = start
        vault = try vault.addingEntry(title: "Mail", userName: "me", password: "mail-0", to: work, at: start, uuid: mail).vault
        vault = try vault.addingEntry(title: "Chase", userName: "me99", password: "bank-0", to: bank, at: start, uuid: chase).vault
        vault = try vault.addingEntry(title: "Old", password: "old-0", to: bin, at: start, uuid: old).vault
        return try vault.addingEntry(title: "Spare", password: "spare-0", to: bin, at: start, uuid: spare).vault
    }

    /// Entry `uuid`'s group in `vault`.
    static func parent(of uuid: UUID, in vault: Vault) -> UUID? { vault.root.entry(uuid)?.1 }

    /// Both merge directions (local <- remote and back), with the certain base and without one as asked.
    static func everyWay(_ base: Vault, _ one: Vault, _ two: Vault, withBase: Bool = true, withoutBase: Bool = true,
                         _ body: (MergeResult, _ local: Vault, _ remote: Vault, _ label: String) throws -> Void) throws {
        for ancestor in (withBase ? [base] : []) + (withoutBase ? [nil] : []) as [Vault?] {
            for (name, local, remote) in [("one <- two", one, two), ("two <- one", two, one)] {
                let result = try VaultMerger.merge(base: ancestor, baseIsCertain: ancestor != nil, local: local, remote: remote)
                try body(result, local, remote, "\(name), \(ancestor == nil ? "no base" : "base")")
            }
        }
    }

    /// What merging `result` again with each input (against the same base) changed: its log and
    /// whether the vault changed.
    static func secondMergeChanges(_ base: Vault?, _ result: Vault, _ inputs: [Vault]) -> [String] {
        inputs.flatMap { input -> [String] in
            guard let again = try? VaultMerger.merge(base: base, baseIsCertain: base != nil, local: result, remote: input) else {
                return ["the merge failed"]
            }
            return again.changes.map { "\($0.kind) \($0.title)" } + (again.vault == result ? [] : ["vault changed: \(Differences.describe(result, again.vault))"])
        }
    }
}

@Suite("Where an entry kept against a deletion ends up (rule 7)")
struct DeletionPlacementTests {
    typealias B = ShapeBase

    @Test("an edit newer than a permanent deletion keeps the entry where the edit left it, restored, with and without a base")
    func editNewerThanDeletionStaysInPlace() throws {
        let base = try B.make()
        let deleter = try base.deletingEntry(B.mail, permanently: true, at: B.at(10))
        let editor = try base.updatingEntry(B.mail, at: B.at(20)) { $0.setField("Notes", .plain("still used")) }
        try B.everyWay(base, deleter, editor) { result, local, remote, label in
            #expect(B.parent(of: B.mail, in: result.vault) == B.work, "\(label): not in the group the edit left it in")
            #expect(result.vault.root.entry(B.mail)?.0.notes == "still used", "\(label)")
            #expect(!result.vault.deletedObjects.contains { $0.uuid == B.mail }, "\(label): a live entry is listed as deleted")
            if local.root.entry(B.mail) == nil {
                #expect(result.changes.contains { $0.kind == .restored && $0.uuid == B.mail }, "\(label): not logged as restored")
            }
            let ancestor = label.hasSuffix("no base") ? nil : base
            #expect(B.secondMergeChanges(ancestor, result.vault, [local, remote]).isEmpty, "\(label)")
        }
    }

    @Test("an edit newer than the deletion of its whole group keeps the group around it; the group's other entries stay deleted")
    func editNewerThanGroupDeletionKeepsTheGroup() throws {
        let base = try B.make()
        let deleter = try base.deletingGroup(B.work, permanently: true, at: B.at(10))
        let editor = try base.updatingEntry(B.mail, at: B.at(20)) { $0.setField("Notes", .plain("still used")) }
        try B.everyWay(base, deleter, editor) { result, local, remote, label in
            #expect(B.parent(of: B.mail, in: result.vault) == B.work, "\(label): not in its group")
            #expect(result.vault.root.group(B.work) != nil, "\(label): the group around the edit is gone")
            #expect(!result.vault.deletedObjects.contains { $0.uuid == B.mail || $0.uuid == B.work }, "\(label)")
            let ancestor = label.hasSuffix("no base") ? nil : base
            #expect(B.secondMergeChanges(ancestor, result.vault, [local, remote]).isEmpty, "\(label)")
        }
    }

    @Test("a permanent deletion newer than an edit it never saw still sends the edited entry to the recycle bin")
    func deletionNewerThanUnseenEditRecycles() throws {
        let base = try B.make()
        let editor = try base.updatingEntry(B.mail, at: B.at(10)) { $0.setField("Notes", .plain("edited first")) }
        let deleter = try base.deletingEntry(B.mail, permanently: true, at: B.at(20))
        try B.everyWay(base, deleter, editor, withoutBase: false) { result, _, _, label in
            #expect(B.parent(of: B.mail, in: result.vault) == B.bin, "\(label): not in the recycle bin")
            #expect(result.vault.root.entry(B.mail)?.0.notes == "edited first", "\(label)")
        }
    }
}

import Foundation
import MyPassCore
import MyPassMerge
import Testing

@Suite("An entry dropped without a tombstone from a certain base, edited on another device")
struct DroppedEntryTests {
    /// `vault` without the entry and without a tombstone (as pykeepass deletes), with a group renamed at `seconds`.
    static func dropping(_ vault: Vault, renameAt seconds: Int64) throws -> Vault {
        var dropped = vault
        if let index = dropped.root.groups.firstIndex(where: { $0.uuid == SmallVault.group }) {
            dropped.root.groups[index].entries.removeAll { $0.uuid == SmallVault.entry }
        }
        return try dropped.renamingGroup(SmallVault.group, to: "Renamed", at: SmallVault.at(seconds))
    }

    @Test("three devices agree whichever meets the drop first: the edit is kept in the recycle bin")
    func droppedThenMergedInAnyOrder() throws {
        let base = try SmallVault.base()
        let dropper = try Self.dropping(base, renameAt: 20)
        let editor = try SmallVault.setting("Notes", "edited before the drop", at: 10, in: base)
        let untouched = base
        let orders = [(dropper, editor, untouched), (untouched, dropper, editor), (editor, untouched, dropper)]
        let results = try orders.map { first, second, third in
            try SmallVault.merge(base, try SmallVault.merge(base, first, second).vault, third).vault
        }
        for result in results {
            let found = result.find(SmallVault.entry)
            #expect(found?.entry.notes == "edited before the drop")
            #expect(found?.inRecycleBin == true)
            #expect(!result.deletedObjects.contains { $0.uuid == SmallVault.entry })
        }
    }

    /// Reduced from generated script seeds 11 and 14: device B edits the entry before device A's
    /// deletion, device C after it; neither edit was seen by the deletion.
    /// Where it ends depends on which edit meets the deletion first (MERGE.md rule 7): the edit after
    /// the deletion keeps it in its group, the edit before sends it to the recycle bin, and a later
    /// merge keeps the place the first merge gave it.
    @Test("an entry edited before and after a deletion that saw neither edit: both edits kept, no tombstone, in every merge order",
          arguments: [true, false])
    func editedBeforeAndAfterTheDeletion(withTombstone: Bool) throws {
        let base = try SmallVault.base()
        let deleter = withTombstone ? try base.deletingEntry(SmallVault.entry, permanently: true, at: SmallVault.at(20))
            : try Self.dropping(base, renameAt: 20)
        let before = try SmallVault.setting("Notes", "edited before the deletion", at: 10, in: base)
        let after = try SmallVault.setting("URL", "edited after the deletion", at: 30, in: base)
        let orders = [(deleter, before, after, true), (after, deleter, before, false), (before, after, deleter, false)]
        for (first, second, third, recycled) in orders {
            let result = try SmallVault.merge(base, try SmallVault.merge(base, first, second).vault, third).vault
            let found = result.find(SmallVault.entry)
            #expect(found?.entry.notes == "edited before the deletion")
            #expect(found?.entry.url == "edited after the deletion")
            #expect(found?.inRecycleBin == recycled)
            #expect(!result.deletedObjects.contains { $0.uuid == SmallVault.entry })
        }
    }
}

extension Vault {
    /// Entry `uuid` and whether it is in the recycle bin.
    func find(_ uuid: UUID) -> (entry: Entry, inRecycleBin: Bool)? {
        guard let (entry, parent) = root.entry(uuid) else { return nil }
        return (entry, isInRecycleBin(group: parent))
    }
}

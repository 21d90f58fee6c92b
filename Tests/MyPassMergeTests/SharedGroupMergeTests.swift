import Foundation
import MyPassCore
import MyPassMerge
import Testing

/// A shared group (KeeShare) against its container: the group Work of `ShapeBase` is shared.
@Suite("Shared groups: the container of a group, merged three-way into it")
struct SharedGroupMergeTests {
    typealias B = ShapeBase

    /// The container as the device exported it at `seconds`.
    static func exported(_ vault: Vault, previous: Vault? = nil, at seconds: Int64 = 1) throws -> Vault {
        try #require(vault.shareContainer(of: B.work, previous: previous, at: B.at(seconds)))
    }

    static func values(of uuid: UUID, in vault: Vault) -> Set<String> {
        guard let entry = vault.root.entry(uuid)?.0 else { return [] }
        return Set(([entry] + entry.history).flatMap { version in version.fields.map { $0.value.text } })
    }

    @Test("a container holds the group's subtree only: same root, no reference, no recycle bin, nothing from outside")
    func containerHoldsTheSubtreeOnly() throws {
        var vault = try B.make()
        vault = try vault.updatingGroup(B.work) { $0.customData.append(CustomDataItem(key: ShareReference.customDataKey, value: "secret-reference")) }
        vault = try vault.attaching(Data(repeating: 7, count: 64), named: "scan.pdf", to: B.mail, at: B.at(2))
        let container = try Self.exported(vault)
        #expect(container.root.uuid == B.work && container.root.name == "Work")
        #expect(container.root.customData.isEmpty, "the reference (with its password) reached the container")
        #expect(container.containerObjects == [B.mail])
        #expect(!container.meta.recycleBinEnabled)
        #expect(container.binaries.sortedIDs.count == 1)
        #expect(container.root.entry(B.chase) == nil && container.root.entry(B.old) == nil)
    }

    @Test("an entry moved out of the shared group leaves the container with a tombstone; one moved in joins it")
    func movedOutLeavesTheContainer() throws {
        let vault = try B.make()
        let first = try Self.exported(vault)
        let moved = try vault.movingEntry(B.mail, to: B.personal, at: B.at(10)).movingEntry(B.chase, to: B.work, at: B.at(10))
        let second = try Self.exported(moved, previous: first, at: 11)
        #expect(second.containerObjects == [B.chase])
        #expect(second.deletedObjects.map(\.uuid) == [B.mail])
        #expect(second.root.uuid == first.root.uuid)
    }

    @Test("edits on both sides of a shared entry are both kept; the sharer's new entry arrives; outside the group nothing changes")
    func editsOnBothSides() throws {
        let vault = try B.make()
        let exchanged = try Self.exported(vault)
        let (sharer, added) = try exchanged.updatingEntry(B.mail, at: B.at(20)) { $0.setField("Notes", .plain("from the sharer")) }
            .addingEntry(title: "Streaming", password: "tv-1", to: exchanged.root.uuid, at: B.at(21))
        let here = try vault.updatingEntry(B.mail, at: B.at(10)) { $0.setField("UserName", .plain("me-here")) }
            .updatingEntry(B.chase, at: B.at(12)) { $0.setField("Notes", .plain("outside")) }
        let result = try SharedGroupMerge.importing(sharer, exchanged: exchanged, into: here, group: B.work)
        let mail = try #require(result.vault.root.entry(B.mail)?.0)
        #expect(mail.userName == "me-here" && mail.notes == "from the sharer")
        #expect(B.parent(of: added, in: result.vault) == B.work)
        #expect(result.vault.root.entry(B.chase)?.0 == here.root.entry(B.chase)?.0)
        #expect(result.vault.root.group(B.personal) == here.root.group(B.personal))
        #expect(result.vault.meta == here.meta)
        let again = try SharedGroupMerge.importing(sharer, exchanged: sharer, into: result.vault, group: B.work)
        #expect(again.changes.isEmpty, "a second import changed \(again.changes.map { "\($0.kind) \($0.title)" })")
    }

    @Test("the container deletes an entry edited here after the last exchange (KeePassXC issue 6477): the edit is kept",
          arguments: [true, false])
    func deletionNeverDestroysAnUnseenEdit(withTombstone: Bool) throws {
        let vault = try B.make()
        let exchanged = try Self.exported(vault)
        var sharer = exchanged
        sharer.root.entries.removeAll { $0.uuid == B.mail }
        if withTombstone { sharer.deletedObjects.append(DeletedObject(uuid: B.mail, deletedAt: B.at(30))) }
        let here = try vault.updatingEntry(B.mail, at: B.at(20)) { $0.setField("Password", .plain("edited-here")) }
        let result = try SharedGroupMerge.importing(sharer, exchanged: exchanged, into: here, group: B.work)
        #expect(Self.values(of: B.mail, in: result.vault).contains("edited-here"), "the edit made here was deleted")
        #expect(!result.vault.deletedObjects.contains { $0.uuid == B.mail })
    }

    @Test("an entry not edited here since the exchange and deleted in the container is deleted here too")
    func deletionOfAnUneditedEntry() throws {
        let vault = try B.make()
        let exchanged = try Self.exported(vault)
        var sharer = exchanged
        sharer.root.entries.removeAll { $0.uuid == B.mail }
        sharer.deletedObjects.append(DeletedObject(uuid: B.mail, deletedAt: B.at(30)))
        let result = try SharedGroupMerge.importing(sharer, exchanged: exchanged, into: vault, group: B.work)
        #expect(B.parent(of: B.mail, in: result.vault) != B.work)
    }

    @Test("a container's tombstones and entries for objects outside the shared group do nothing there (KeePassXC exports every tombstone)")
    func tombstonesOutsideTheShareIgnored() throws {
        let vault = try B.make()
        let exchanged = try Self.exported(vault)
        var sharer = exchanged
        sharer.deletedObjects += [DeletedObject(uuid: B.chase, deletedAt: B.at(30)), DeletedObject(uuid: B.personal, deletedAt: B.at(30))]
        let result = try SharedGroupMerge.importing(sharer, exchanged: exchanged, into: vault, group: B.work)
        #expect(result.vault.root.entry(B.chase) != nil && result.vault.root.group(B.personal) != nil)
        #expect(!result.hasChanges)
        // A container naming the shared group itself or the root as one of its objects: ignored.
        var hostile = exchanged
        hostile.root.groups.append(Group(uuid: B.root, name: "root again", times: Times(allAt: B.at(40))))
        hostile.root.groups.append(Group(uuid: B.work, name: "itself", times: Times(allAt: B.at(40))))
        let refused = try SharedGroupMerge.importing(hostile, exchanged: exchanged, into: vault, group: B.work)
        #expect(refused.vault.root.uuid == B.root && refused.vault.root.group(B.work)?.name == "Work")
        #expect(!refused.hasChanges)
    }

    @Test("an entry moved out of the shared group here stays where it was moved; its edit in the container still arrives")
    func movedOutHereStays() throws {
        let vault = try B.make()
        let exchanged = try Self.exported(vault)
        let sharer = try exchanged.updatingEntry(B.mail, at: B.at(20)) { $0.setField("URL", .plain("https://mail.example")) }
        let here = try vault.movingEntry(B.mail, to: B.personal, at: B.at(10))
        let result = try SharedGroupMerge.importing(sharer, exchanged: exchanged, into: here, group: B.work)
        #expect(B.parent(of: B.mail, in: result.vault) == B.personal)
        #expect(result.vault.root.entry(B.mail)?.0.url == "https://mail.example")
    }

    /// Two devices wrote the container at once, each from the version both had; the sync engine kept
    /// the other's. What this device imports then is a sibling of its own export, not a later version:
    /// what it lacks of this device's export was never seen by its writer, not deleted.
    static func siblings() throws -> (here: Vault, exchanged: Vault, sibling: Vault, mine: UUID, theirs: UUID) {
        let vault = try B.make()
        let first = try Self.exported(vault)
        let (here, mine) = try vault.updatingEntry(B.mail, at: B.at(10)) { $0.setField("UserName", .plain("me-here")) }
            .addingEntry(title: "Mine", password: "mine-1", to: B.work, at: B.at(11))
        let exchanged = try Self.exported(here, previous: first, at: 12)
        let (sibling, theirs) = try first.updatingEntry(B.mail, at: B.at(13)) { $0.setField("Notes", .plain("from the other device")) }
            .addingEntry(title: "Theirs", password: "theirs-1", to: first.root.uuid, at: B.at(14))
        return (here, exchanged, sibling, mine, theirs)
    }

    @Test("a container written at the same time by another device, kept over this device's export: nothing of this export deleted, both edits of one entry kept")
    func siblingOfTheExportDeletesNothing() throws {
        let (here, exchanged, sibling, mine, theirs) = try Self.siblings()
        let result = try SharedGroupMerge.importing(sibling, exchanged: exchanged, into: here, group: B.work)
        #expect(B.parent(of: mine, in: result.vault) == B.work, "this device's new entry was deleted: \(result.changes.map { "\($0.kind) \($0.title)" })")
        #expect(B.parent(of: theirs, in: result.vault) == B.work)
        let mail = try #require(result.vault.root.entry(B.mail)?.0)
        #expect(mail.userName == "me-here" && mail.notes == "from the other device", "\(mail.userName) / \(mail.notes)")
        // Exporting only over that sibling keeps this device's part as well as the other's.
        let written = try #require(try SharedGroupMerge.exporting(here, group: B.work, current: sibling, exchanged: exchanged, at: B.at(30)))
        #expect(written.containerObjects.isSuperset(of: [B.mail, mine, theirs]), "\(written.root.entries.map(\.title))")
        // The other device, given this device's export as a conflict copy, keeps its own part too.
        let there = try SharedGroupMerge.importing(exchanged, exchanged: sibling, into: result.vault, group: B.work)
        #expect(B.parent(of: theirs, in: there.vault) == B.work && B.parent(of: mine, in: there.vault) == B.work)
    }

    @Test("a container that lacks an entry without a tombstone for it is no later version: the entry stays; with a tombstone it goes")
    func dropWithoutTombstoneIsNoDeletion() throws {
        let vault = try B.make()
        let exchanged = try Self.exported(vault)
        var dropped = exchanged
        dropped.root.entries.removeAll { $0.uuid == B.mail }
        let kept = try SharedGroupMerge.importing(dropped, exchanged: exchanged, into: vault, group: B.work)
        #expect(B.parent(of: B.mail, in: kept.vault) == B.work, "\(kept.changes.map { "\($0.kind) \($0.title)" })")
        var deleted = dropped
        deleted.deletedObjects.append(DeletedObject(uuid: B.mail, deletedAt: B.at(30)))
        let gone = try SharedGroupMerge.importing(deleted, exchanged: exchanged, into: vault, group: B.work)
        #expect(B.parent(of: B.mail, in: gone.vault) != B.work)
    }

    @Test("exporting over a container another writer changed since the exchange merges its change first")
    func exportMergesAChangedContainer() throws {
        let vault = try B.make()
        let exchanged = try Self.exported(vault)
        let other = try exchanged.updatingEntry(B.mail, at: B.at(20)) { $0.setField("Notes", .plain("other writer")) }
        let here = try vault.updatingEntry(B.mail, at: B.at(10)) { $0.setField("UserName", .plain("me-here")) }
        let written = try #require(try SharedGroupMerge.exporting(here, group: B.work, current: other, exchanged: exchanged, at: B.at(30)))
        let mail = try #require(written.root.entry(B.mail)?.0)
        #expect(mail.userName == "me-here" && mail.notes == "other writer")
        #expect(written.containerObjects == [B.mail] && !written.meta.recycleBinEnabled)
    }

    /// Random edits made on the vault (inside and outside the group) and on the container after an
    /// exchange; the import keeps every value either side set, leaves what is outside the group as it
    /// was (the recycle bin aside), and importing the same container again changes nothing.
    @Test("generated edits on a vault and its container: nothing lost, nothing outside touched, a second import changes nothing",
          arguments: 0..<60)
    func generatedExchanges(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        var vault = try B.make()
        for index in 0..<Int.random(in: 0...3, using: &random) {
            vault = try vault.addingEntry(title: "Shared \(index)", password: "s-\(index)", to: B.work, at: B.at(1), uuid: UUID(uuidString: String(format: "5E000000-0000-0000-0000-%012d", index))!).vault
        }
        let exchanged = try Self.exported(vault, at: 2)
        var here = vault, sharer = exchanged
        var setValues: [(UUID, String)] = []
        var deletedInContainer: Set<UUID> = []
        for step in 0..<Int.random(in: 1...8, using: &random) {
            let seconds = Int64(10 + step)
            let shared = Array(sharer.containerObjects.subtracting(deletedInContainer)).sorted { $0.uuidString < $1.uuidString }
            let ownShared = Array(here.objectsOfGroup(B.work).subtracting([B.work])).sorted { $0.uuidString < $1.uuidString }
            switch Int.random(in: 0..<6, using: &random) {
            case 0 where !ownShared.isEmpty:
                let id = ownShared.randomElement(using: &random)!, value = "here-\(seed)-\(step)"
                here = try here.updatingEntry(id, at: B.at(seconds)) { $0.setField("Notes", .plain(value)) }
                setValues.append((id, value))
            case 1 where !shared.isEmpty:
                let id = shared.randomElement(using: &random)!, value = "sharer-\(seed)-\(step)"
                sharer = try sharer.updatingEntry(id, at: B.at(seconds)) { $0.setField("UserName", .plain(value)) }
                setValues.append((id, value))
            case 2:
                let value = "new-here-\(seed)-\(step)"
                let added = try here.addingEntry(title: value, to: B.work, at: B.at(seconds))
                here = added.vault
                setValues.append((added.uuid, value))
            case 3:
                let value = "new-sharer-\(seed)-\(step)"
                let added = try sharer.addingEntry(title: value, to: sharer.root.uuid, at: B.at(seconds))
                sharer = added.vault
                setValues.append((added.uuid, value))
            case 4 where !shared.isEmpty:
                let id = shared.randomElement(using: &random)!
                sharer.root.entries.removeAll { $0.uuid == id }
                sharer.deletedObjects.append(DeletedObject(uuid: id, deletedAt: B.at(seconds)))
                deletedInContainer.insert(id)
            case 5:
                here = try here.updatingEntry(B.chase, at: B.at(seconds)) { $0.setField("Notes", .plain("outside-\(step)")) }
            default:
                break
            }
        }
        let result = try SharedGroupMerge.importing(sharer, exchanged: exchanged, into: here, group: B.work)
        for (id, value) in setValues {
            // A value the container set on an entry it deleted later is gone with it, as the sharer chose.
            let deletedAfterSetting = deletedInContainer.contains(id) && (value.hasPrefix("sharer-") || value.hasPrefix("new-sharer-"))
            if !deletedAfterSetting {
                #expect(Self.values(of: id, in: result.vault).contains(value), "seed \(seed): \(value) lost")
            }
        }
        let outside = here.root.groups.filter { $0.uuid != B.work && $0.uuid != B.bin }
        #expect(result.vault.root.groups.filter { $0.uuid != B.work && $0.uuid != B.bin } == outside, "seed \(seed): outside the group changed")
        let again = try SharedGroupMerge.importing(sharer, exchanged: sharer, into: result.vault, group: B.work)
        #expect(again.changes.isEmpty, "seed \(seed): a second import changed \(again.changes.map { "\($0.kind) \($0.title)" })")
        let container = try #require(try SharedGroupMerge.exporting(result.vault, group: B.work, current: sharer, exchanged: sharer, at: B.at(60)))
        let reimported = try SharedGroupMerge.importing(container, exchanged: container, into: result.vault, group: B.work)
        #expect(reimported.changes.isEmpty, "seed \(seed): importing its own export changed \(reimported.changes.map { "\($0.kind) \($0.title)" })")
    }

    /// The merge's own generated edits (`RandomReplicas`, as the merge's property tests use them) made on
    /// a random vault (anywhere in it) and on its random group's container after an exchange.
    @Test("the merge's generated edits on a vault and its group's container: outside the group untouched, the container's versions kept, an edit here never deleted, a second import changes nothing",
          arguments: 0..<80)
    func replicaEdits(seed: UInt64) throws {
        var replicas = RandomReplicas(seed: seed)
        let base = try replicas.baseVault()
        var groups: [UUID] = []
        base.root.forEachGroup { group, _ in if group.uuid != base.root.uuid { groups.append(group.uuid) } }
        guard let shared = groups.randomElement(using: &replicas.random) else { return }
        let exchanged = try #require(base.shareContainer(of: shared, previous: nil, at: replicas.start))
        let here = try replicas.edit(base, count: Int.random(in: 1...6, using: &replicas.random), firstTime: Timestamp(secondsSinceYearOne: replicas.start.secondsSinceYearOne + 10))
        let there = try replicas.edit(exchanged, count: Int.random(in: 1...6, using: &replicas.random), firstTime: Timestamp(secondsSinceYearOne: replicas.start.secondsSinceYearOne + 13))
        let result = try SharedGroupMerge.importing(there, exchanged: exchanged, into: here, group: shared)
        let scope = here.objectsOfGroup(shared).union(there.containerObjects).union(exchanged.containerObjects)
        for (entry, _) in here.root.allEntries() where !scope.contains(entry.uuid) {
            #expect(result.vault.root.entry(entry.uuid)?.entry == entry, "seed \(seed): \(entry.title) outside the share changed")
        }
        let tombstonedHere = Set(here.deletedObjects.map(\.uuid))
        for (entry, _) in there.root.allEntries() where !tombstonedHere.contains(entry.uuid) {
            guard let merged = result.vault.root.entry(entry.uuid)?.entry else {
                // Gone only when this side deleted it (into its bin, then for good) or moved it away, never silently.
                #expect(here.root.entry(entry.uuid) == nil && exchanged.root.entry(entry.uuid) != nil,
                        "seed \(seed): the container's \(entry.title) vanished")
                continue
            }
            let held = Set(([merged] + merged.history).map(\.contentDigest))
            #expect(held.contains(entry.contentDigest), "seed \(seed): the container's version of \(entry.title) is lost")
        }
        for (entry, _) in here.root.allEntries() where here.objectsOfGroup(shared).contains(entry.uuid) {
            let before = exchanged.root.entry(entry.uuid)?.entry
            guard before.map({ !$0.hasSameContent(as: entry) }) ?? true else { continue }  // edited or added here since the exchange
            #expect(result.vault.root.entry(entry.uuid) != nil, "seed \(seed): \(entry.title), edited here, was deleted")
        }
        let again = try SharedGroupMerge.importing(there, exchanged: there, into: result.vault, group: shared)
        #expect(again.changes.isEmpty, "seed \(seed): a second import changed \(again.changes.map { "\($0.kind) \($0.title)" })")
    }
}

import Foundation
import MyPassCore
import MyPassMerge
import Testing

/// The recycle bin setting and the group it names travel together (MERGE.md rules 9 and 11): a bin
/// chosen on one device stays the bin with its group, never tombstoned while the setting names it;
/// two bins fold into the one the newer setting names.
@Suite("The recycle bin travels with its group")
struct RecycleBinSettingTests {
    static let oldBin = UUID(uuidString: "B1B00000-0000-0000-0000-000000000001")!
    static let newBin = UUID(uuidString: "B1B00000-0000-0000-0000-000000000002")!
    static let otherBin = UUID(uuidString: "B1B00000-0000-0000-0000-000000000003")!
    static let second = UUID(uuidString: "E0000000-0000-0000-0000-000000000002")!

    /// The small vault with a second entry and, when `withBin`, a recycle bin made with the base.
    static func base(withBin: Bool = true) throws -> Vault {
        var vault = try SmallVault.base()
        vault = try vault.addingEntry(title: "Second", to: SmallVault.group, at: SmallVault.start, uuid: second).vault
        if withBin { vault = try pointingBin(at: oldBin, creating: true, at: 0, in: vault) }
        return vault
    }

    /// `vault` whose recycle bin is group `bin` (made under the root when `creating`) from `seconds` on.
    static func pointingBin(at bin: UUID, creating: Bool, at seconds: Int64, in vault: Vault) throws -> Vault {
        var changed = creating ? try vault.addingGroup(named: "Bin \(bin.uuidString.suffix(4))", to: SmallVault.root,
                                                       at: SmallVault.at(seconds), uuid: bin).vault : vault
        changed.meta.recycleBinEnabled = true
        changed.meta.recycleBinUUID = bin
        changed.meta.recycleBinChanged = SmallVault.at(seconds)
        return changed
    }

    /// Checks `body` on the merge of `a` and `b` both ways, with `base` and without, and that merging each result
    /// again with either input changes nothing.
    static func everyWay(_ base: Vault, _ a: Vault, _ b: Vault, _ body: (Vault, String) -> Void) throws {
        for ancestor in [base, nil] as [Vault?] {
            for (label, local, remote) in [("a <- b", a, b), ("b <- a", b, a)] {
                let name = "\(label), \(ancestor == nil ? "no base" : "base")"
                let merged = try SmallVault.merge(ancestor, local, remote).vault
                body(merged, name)
                let again = try SmallVault.changesMergedAgain(ancestor, merged, with: [local, remote])
                #expect(again.isEmpty, "\(name): merging again changed \(again)")
            }
        }
    }

    @Test("a bin pointed at a group one device created: that group is the bin, kept; the old bin stays an ordinary group")
    func binMovedToNewGroup() throws {
        let base = try Self.base()
        let local = try Self.pointingBin(at: Self.newBin, creating: true, at: 10, in: base)
        let remote = try SmallVault.setting("Notes", "remote edit", at: 20, in: base)
        try Self.everyWay(base, local, remote) { merged, label in
            #expect(merged.meta.recycleBinUUID == Self.newBin, "\(label): the bin setting was dropped")
            #expect(merged.root.group(Self.newBin) != nil, "\(label): the new bin group was deleted")
            #expect(!merged.deletedObjects.contains { $0.uuid == Self.newBin }, "\(label): the new bin group is tombstoned")
            #expect(merged.root.group(Self.oldBin) != nil, "\(label): the old bin, an ordinary group now, was folded away")
            #expect(SmallVault.current(merged)?.notes == "remote edit", "\(label)")
        }
    }

    @Test("the bin pointed at an existing group that the other device deleted later: the group is kept with the setting")
    func namedGroupNeverTombstoned() throws {
        let base = try Self.base()
        let local = try Self.pointingBin(at: SmallVault.group, creating: false, at: 10, in: base)
        let remote = try base.deletingGroup(SmallVault.group, permanently: true, at: SmallVault.at(20))
        for ancestor in [base, nil] as [Vault?] {
            for (local, remote) in [(local, remote), (remote, local)] {
                let merged = try SmallVault.merge(ancestor, local, remote).vault
                if merged.meta.recycleBinUUID == SmallVault.group {
                    #expect(merged.root.group(SmallVault.group) != nil, "the group the bin setting names was deleted")
                    #expect(!merged.deletedObjects.contains { $0.uuid == SmallVault.group }, "the bin group is tombstoned")
                }
                for input in [local, remote] {
                    #expect(try SmallVault.merge(ancestor, merged, input).changes.isEmpty)
                }
            }
            let merged = try SmallVault.merge(ancestor, local, remote).vault
            if ancestor != nil { #expect(merged.meta.recycleBinUUID == SmallVault.group, "the one-sided bin change was lost") }
        }
    }

    @Test("both devices make a bin: one bin, the one the newer setting names, holding both recycled entries")
    func twoBinsFoldIntoTheNewer() throws {
        let base = try Self.base(withBin: false)
        let local = try Self.pointingBin(at: Self.newBin, creating: true, at: 20, in: base).deletingEntry(SmallVault.entry, at: SmallVault.at(20))
        let remote = try Self.pointingBin(at: Self.otherBin, creating: true, at: 10, in: base).deletingEntry(Self.second, at: SmallVault.at(10))
        try Self.everyWay(base, local, remote) { merged, label in
            #expect(merged.meta.recycleBinUUID == Self.newBin, "\(label)")
            #expect(merged.root.group(Self.otherBin) == nil, "\(label): two bins")
            for id in [SmallVault.entry, Self.second] {
                #expect(merged.root.entry(id)?.parent == Self.newBin, "\(label): a recycled entry is not in the bin")
            }
        }
    }

    @Test("two devices make a bin, one of them recycling an entry a third device moves out later: the later move wins in every order of merging")
    func foldKeepsALaterMoveOutOfTheBin() throws {
        let base = try Self.base(withBin: false)
        let recycler = try Self.pointingBin(at: Self.newBin, creating: true, at: 10, in: base).deletingEntry(SmallVault.entry, at: SmallVault.at(10))
        // The other bin is made after the move: its setting wins the fold, which must not outrank the move.
        let otherBin = try Self.pointingBin(at: Self.otherBin, creating: true, at: 30, in: base).deletingEntry(Self.second, at: SmallVault.at(30))
        let mover = try base.movingEntry(SmallVault.entry, to: SmallVault.root, at: SmallVault.at(20))
        for ancestor in [base, nil] as [Vault?] {
            let results = try SmallVault.mergedInOrders(ancestor, recycler, otherBin, mover)
            for (index, merged) in results.enumerated() {
                #expect(merged.root.entry(SmallVault.entry)?.parent == SmallVault.root,
                        "order \(index), \(ancestor == nil ? "no base" : "base"): the later move out of the bin was lost to the fold")
            }
        }
    }

    /// Generated: each side moves its bin to a new or an existing group, recycles entries, deletes groups
    /// for good or edits, in random order and times.
    @Test("generated: the named bin exists, is not tombstoned, the same both ways; merging again changes nothing", arguments: 0..<150)
    func generated(seed: UInt64) throws {
        var random = SeededGenerator(seed: 0x4249_4E00 + seed)
        var base = try Self.base(withBin: Bool.random(using: &random))
        let groups = [UUID(uuidString: "6E000000-0000-0000-0000-000000000001")!, UUID(uuidString: "6E000000-0000-0000-0000-000000000002")!]
        for (index, id) in groups.enumerated() { base = try base.addingGroup(named: "G\(index)", to: SmallVault.root, at: SmallVault.start, uuid: id).vault }
        func device(_ newBin: UUID) throws -> Vault {
            var vault = base
            var time = Int64.random(in: 1...5, using: &random)
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                time += Int64.random(in: 0...3, using: &random)
                // Not the entries' own group: a bin pointed there folds recycled entries back to their base place,
                // which a later merge reads as no move (MERGE.md rule 14 for locations is the move rules' part).
                let live = (groups + [Self.oldBin, newBin]).filter { vault.root.group($0) != nil }
                switch Int.random(in: 0..<5, using: &random) {
                case 0 where vault.root.group(newBin) == nil:
                    vault = try Self.pointingBin(at: newBin, creating: true, at: time, in: vault)
                case 1:
                    guard let group = live.randomElement(using: &random) else { continue }
                    vault = try Self.pointingBin(at: group, creating: false, at: time, in: vault)
                case 2:
                    let entry = [SmallVault.entry, Self.second].randomElement(using: &random)!
                    guard vault.root.entry(entry) != nil else { continue }
                    if vault.meta.recycleBinUUID.map({ vault.root.group($0) == nil }) ?? true {
                        vault = try Self.pointingBin(at: newBin, creating: vault.root.group(newBin) == nil, at: time, in: vault)
                    }
                    vault = try vault.deletingEntry(entry, at: SmallVault.at(time))
                case 3:
                    guard let group = groups.filter({ vault.root.group($0) != nil }).randomElement(using: &random) else { continue }
                    vault = try vault.deletingGroup(group, permanently: true, at: SmallVault.at(time))
                default:
                    guard vault.root.entry(Self.second) != nil else { continue }
                    vault = try vault.updatingEntry(Self.second, at: SmallVault.at(time)) { $0.setField("Notes", .plain("n\(time)")) }
                }
            }
            return vault
        }
        let local = try device(Self.newBin), remote = try device(Self.otherBin)
        for ancestor in [base, nil] as [Vault?] {
            let label = "seed \(seed), \(ancestor == nil ? "no base" : "base")"
            let forward = try SmallVault.merge(ancestor, local, remote).vault
            let backward = try SmallVault.merge(ancestor, remote, local).vault
            #expect(forward.meta.recycleBinUUID == backward.meta.recycleBinUUID, "\(label): the directions disagree on the bin")
            for merged in [forward, backward] {
                if let bin = merged.meta.recycleBinUUID, local.root.group(bin) != nil || remote.root.group(bin) != nil {
                    #expect(merged.root.group(bin) != nil, "\(label): the named bin group is gone")
                    #expect(!merged.deletedObjects.contains { $0.uuid == bin }, "\(label): the named bin group is tombstoned")
                }
                let bins = [Self.newBin, Self.otherBin].filter { merged.root.group($0) != nil && merged.meta.recycleBinUUID != $0 }
                let madeOnBothSides = local.root.group(Self.newBin) != nil && remote.root.group(Self.otherBin) != nil
                    && local.meta.recycleBinUUID == Self.newBin && remote.meta.recycleBinUUID == Self.otherBin
                if madeOnBothSides { #expect(bins.isEmpty, "\(label): two bins") }
            }
            for input in [local, remote] {
                let again = try SmallVault.merge(ancestor, forward, input)
                #expect(again.changes.isEmpty && again.vault.meta.recycleBinUUID == forward.meta.recycleBinUUID,
                        "\(label): merging again changed \(again.changes.map { "\($0.kind) \($0.title)" })")
            }
        }
    }
}

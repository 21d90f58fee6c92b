import Foundation
import MyPassCore
import MyPassMerge
import Testing

/// Each memory-protection flag merges as a Meta setting of its own (MERGE.md rule 11), timed by
/// SettingsChanged: one side's change of one flag never undoes the other side's change of another.
@Suite("Memory-protection flags merged one by one")
struct MemoryProtectionMergeTests {
    /// `vault` with `flags` set to `isOn` at `seconds` after the small vault's start.
    static func protecting(_ flags: [MemoryProtectionFlag: Bool], at seconds: Int64, in vault: Vault) -> Vault {
        var changed = vault
        for (flag, isOn) in flags { flag.set(isOn, in: &changed.meta.memoryProtection) }
        changed.meta.settingsChanged = SmallVault.at(seconds)
        return changed
    }

    static func flags(_ vault: Vault) -> [MemoryProtectionFlag: Bool] {
        Dictionary(uniqueKeysWithValues: MemoryProtectionFlag.allCases.map { ($0, $0.isOn(in: vault.meta.memoryProtection)) })
    }

    @Test("one side protects user names, the other (later) protects URLs: both flags set, both directions")
    func differentFlagsBothKept() throws {
        let base = try SmallVault.base()
        let local = Self.protecting([.userName: true], at: 10, in: base)
        let remote = Self.protecting([.url: true], at: 20, in: base)
        for (one, two) in [(local, remote), (remote, local)] {
            let merged = try SmallVault.merge(base, one, two)
            #expect(merged.vault.meta.memoryProtection.protectUserName, "the user-name flag was lost")
            #expect(merged.vault.meta.memoryProtection.protectURL, "the URL flag was lost")
            #expect(merged.vault.meta.settingsChanged == SmallVault.at(20))
            let named = merged.changes.filter { $0.kind == .metaChanged }.flatMap(\.fields)
            #expect(named.allSatisfy { $0.hasPrefix("Protect") } && !named.isEmpty, "\(named)")
            #expect(try SmallVault.changesMergedAgain(base, merged.vault, with: [one, two]).isEmpty)
        }
    }

    @Test("a flag turned off on one side and another turned on on the other: both, and merging again flips nothing back")
    func offAndOn() throws {
        let base = try SmallVault.base()
        let local = Self.protecting([.password: false], at: 30, in: base)
        let remote = Self.protecting([.notes: true], at: 10, in: base)
        for (one, two) in [(local, remote), (remote, local)] {
            let merged = try SmallVault.merge(base, one, two).vault
            #expect(!merged.meta.memoryProtection.protectPassword && merged.meta.memoryProtection.protectNotes)
            for input in [one, two] {
                #expect(Self.flags(try SmallVault.merge(base, merged, input).vault) == Self.flags(merged))
                #expect(Self.flags(try SmallVault.merge(nil, merged, input).vault) == Self.flags(merged))
            }
        }
    }

    /// Generated: random flags changed on each side at random times, with and without the base.
    @Test("generated: with a base each flag takes the side that changed it; both directions agree; merging again changes nothing",
          arguments: 0..<60)
    func generated(seed: UInt64) throws {
        var random = SeededGenerator(seed: 0x4D50_0000 + seed)
        var base = try SmallVault.base()
        for flag in MemoryProtectionFlag.allCases { flag.set(Bool.random(using: &random), in: &base.meta.memoryProtection) }
        func side() -> (Vault, changed: Set<MemoryProtectionFlag>) {
            let changed = Set(MemoryProtectionFlag.allCases.filter { _ in Int.random(in: 0..<3, using: &random) == 0 })
            let flips = Dictionary(uniqueKeysWithValues: changed.map { ($0, !$0.isOn(in: base.meta.memoryProtection)) })
            return (Self.protecting(flips, at: Int64.random(in: 1...4, using: &random), in: base), changed)
        }
        let (local, localChanged) = side(), (remote, remoteChanged) = side()
        for ancestor in [base, nil] as [Vault?] {
            let forward = try SmallVault.merge(ancestor, local, remote).vault
            let backward = try SmallVault.merge(ancestor, remote, local).vault
            #expect(Self.flags(forward) == Self.flags(backward), "seed \(seed), base \(ancestor != nil): the directions disagree")
            if ancestor != nil {
                for flag in MemoryProtectionFlag.allCases where localChanged.contains(flag) || remoteChanged.contains(flag) {
                    #expect(flag.isOn(in: forward.meta.memoryProtection) != flag.isOn(in: base.meta.memoryProtection),
                            "seed \(seed): the one-sided change of \(flag.elementName) was lost")
                }
            }
            for input in [local, remote] {
                let again = try SmallVault.merge(ancestor, forward, input)
                #expect(again.changes.isEmpty && Self.flags(again.vault) == Self.flags(forward),
                        "seed \(seed), base \(ancestor != nil): merging again changed \(again.changes.flatMap(\.fields))")
            }
        }
    }
}

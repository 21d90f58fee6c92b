import Foundation
import MyPassCore
import MyPassMerge
import Testing

@Suite("Group custom data merged per key")
struct GroupCustomDataTests {
    static let other = UUID(uuidString: "D0000000-0000-0000-0000-000000000002")!

    @Test("without a base, a key added on the side whose group time a child's move explains is kept")
    func keyKeptBesideChildMove() throws {
        var base = try SmallVault.base()
        base = try base.addingGroup(named: "Other", to: SmallVault.root, at: SmallVault.start, uuid: Self.other).vault
        let local = try base.updatingGroup(SmallVault.group, at: SmallVault.at(10)) {
            $0.customData.append(CustomDataItem(key: "local-key", value: "l"))
        }
        // The remote adds its key, then moves another group into this one a second later.
        let remote = try base.updatingGroup(SmallVault.group, at: SmallVault.at(9)) {
            $0.customData.append(CustomDataItem(key: "remote-key", value: "r"))
        }.movingGroup(Self.other, to: SmallVault.group, at: SmallVault.at(10))
        for (first, second) in [(local, remote), (remote, local)] {
            let merged = try SmallVault.merge(nil, first, second).vault
            let keys = Set(merged.root.group(SmallVault.group)?.customData.map(\.key) ?? [])
            #expect(keys.isSuperset(of: ["local-key", "remote-key"]), "\(keys)")
            let again = try SmallVault.changesMergedAgain(nil, merged, with: [first, second])
            #expect(again.isEmpty, "\(again)")
        }
    }

    @Test("a vault that differs only in a group's custom data has other content (a merge that brought it is written)")
    func customDataIsContent() throws {
        let base = try SmallVault.base()
        let changed = try base.updatingGroup(SmallVault.group, at: SmallVault.at(5)) { $0.customData.append(CustomDataItem(key: "k", value: "v")) }
        let same = VaultDiff.sameContent(base, changed)
        #expect(!same)
        let bookkeeping = try base.updatingGroup(SmallVault.group, at: SmallVault.at(5)) {
            $0.customData.append(CustomDataItem(key: CustomDataItem.bookkeepingKey, value: "now"))
        }
        #expect(VaultDiff.diff(from: base, to: bookkeeping).allSatisfy { !$0.fields.contains("CustomData") })
    }
}

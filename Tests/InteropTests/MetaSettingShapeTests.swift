import Foundation
import MyPassCore
import MyPassMerge
import Testing

/// Vault settings changed with pykeepass (through its XML tree, as an app's settings dialog does):
/// each memory-protection flag on its own, and the recycle bin with the group it names (MERGE.md
/// rules 9 and 11), both directions, with the base and without; merging again changes nothing.
@Suite("Vault settings made by pykeepass", .serialized)
struct MetaSettingShapeTests {
    typealias V = ShapeVault
    static let trash = UUID(uuidString: "A1000000-0000-0000-0000-0000000000B1")!

    /// The shape vault with a recycle bin made with it (`base`), on laptop and phone, edited by `edit`.
    func devices(base: Vault? = nil, _ edit: (ClientDevices) throws -> Void, check: (ClientDevices) throws -> Void) throws {
        let devices = try ClientDevices.make(try base ?? V.make().withRecycleBin(at: V.made), devices: ["laptop", "phone"])
        defer { devices.remove() }
        try edit(devices)
        try check(devices)
    }

    func job(_ device: String, after seconds: Int64, _ ops: [[String: Any]]) -> ClientDevices.PyJob {
        ClientDevices.PyJob(device: device, clock: V.clientsStart.adding(seconds), ops: ops)
    }

    @Test("user names protected on the laptop, URLs later on the phone: with the base both flags are set; every way agrees")
    func memoryProtectionFlags() throws {
        try devices({ devices in
            try devices.pykeepass([
                job("laptop", after: 0, [["op": "memoryProtection", "flag": "ProtectUserName", "value": true]]),
                job("phone", after: 5, [["op": "memoryProtection", "flag": "ProtectURL", "value": true]]),
            ])
        }, check: { devices in
            try EveryWay(devices: devices).check(withoutBase: false) { result, label in
                #expect(result.vault.meta.memoryProtection.protectUserName, "\(label): the laptop's flag was lost")
                #expect(result.vault.meta.memoryProtection.protectURL, "\(label): the phone's flag was lost")
            }
            // Without a base nothing says which side changed which flag: the newer settings, the same both ways.
            var protections: [Meta.MemoryProtection] = []
            try EveryWay(devices: devices).check(withBase: false) { result, _ in protections.append(result.vault.meta.memoryProtection) }
            #expect(Set(protections).count == 1 && protections.first?.protectURL == true)
        })
    }

    @Test("the laptop points the recycle bin at a group it made: that group is the bin and stays, the old bin stays a group")
    func recycleBinMovedToNewGroup() throws {
        let base = try V.make().withRecycleBin(at: V.made)
        let oldBin = try #require(base.meta.recycleBinUUID)
        try devices(base: base, { devices in
            try devices.pykeepass([
                job("laptop", after: 0, [["op": "addGroup", "group": "root", "name": "Trash", "uuid": Self.trash.uuidString],
                                         ["op": "recycleBin", "group": Self.trash.uuidString]]),
                job("phone", after: 5, [["op": "setField", "entry": V.github.uuidString, "key": "Notes", "value": "phone notes"]]),
            ])
        }, check: { devices in
            try EveryWay(devices: devices).check { result, label in
                #expect(result.vault.meta.recycleBinUUID == Self.trash, "\(label): the laptop's bin setting was dropped")
                #expect(result.vault.findGroup(Self.trash) != nil, "\(label): the laptop's bin group was deleted")
                #expect(!result.vault.deletedObjects.contains { $0.uuid == Self.trash }, "\(label): the bin group is tombstoned")
                #expect(result.vault.findGroup(oldBin) != nil, "\(label): the old bin group was folded away")
                #expect(result.vault.find(V.github)?.entry.notes == "phone notes", "\(label)")
            }
        })
    }

    @Test("the laptop makes Archive the recycle bin, the phone deletes Archive (no tombstone): the bin keeps its group")
    func recycleBinGroupDeletedElsewhere() throws {
        try devices({ devices in
            try devices.pykeepass([
                job("laptop", after: 0, [["op": "recycleBin", "group": V.archive.uuidString]]),
                job("phone", after: 5, [["op": "deleteGroup", "group": V.archive.uuidString]]),
            ])
        }, check: { devices in
            try EveryWay(devices: devices).check { result, label in
                #expect(result.vault.meta.recycleBinUUID == V.archive, "\(label): the laptop's bin setting was dropped")
                #expect(result.vault.findGroup(V.archive) != nil, "\(label): the group the bin setting names was deleted")
                #expect(!result.vault.deletedObjects.contains { $0.uuid == V.archive }, "\(label): the bin group is tombstoned")
            }
        })
    }
}

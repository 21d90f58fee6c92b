import Foundation
import MyPassCore

/// SplitMix64: a seeded generator, so that every script can be made again from its seed.
struct ScriptRandom: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A random edit script for one device of the shape vault: pykeepass operations, at most one
/// keepassxc-cli edit (made first, on the base's layout), and the values each step set, so that a
/// merge can be checked for losing none.
struct EditScript {
    /// A value set on an object, found in a merged vault as text (current, history, recycle bin).
    struct SetValue: Hashable {
        let object: UUID
        let value: String
        /// Replaced by a later step of the same device (kept only in history, which a lowered
        /// history limit may trim).
        var replaced = false
        /// The field or sequence it was set into (nil: an addition, a tag, an attachment...).
        var slot: String?
    }

    var pykeepass: [[String: Any]] = []
    /// keepassxc-cli `edit` arguments (options and the entry's path), if any.
    var keepassxc: [String]?
    var values: [SetValue] = []
    /// Objects this device deleted (its own deletion saw its own values).
    var deleted: Set<UUID> = []
    /// Whether this device lowered the history limit (older values of its own may be trimmed).
    var limitsHistory = false

    static let entries = [ShapeVault.github, ShapeVault.chase, ShapeVault.old]
    static let groups = [ShapeVault.internet, ShapeVault.bank, ShapeVault.archive]

    /// `count` random operations of device `device` in script `seed`.
    static func random(seed: UInt64, device: String, count: Int, using random: inout ScriptRandom, withKeePassXC: Bool) -> EditScript {
        var script = EditScript()
        var lastSet: [String: Int] = [:]  // the value set last into each entry's field or sequence
        var inBin = Set<UUID>()  // entries this script sent to the recycle bin (and did not move out)
        /// A value that replaces the one an earlier step set into the same entry's `slot`.
        func setting(_ entry: UUID, _ slot: String, _ value: String) {
            if let earlier = lastSet["\(entry) \(slot)"] { script.values[earlier].replaced = true }
            lastSet["\(entry) \(slot)"] = script.values.count
            script.values.append(SetValue(object: entry, value: value, slot: slot))
        }
        func token(_ index: Int) -> String { "s\(seed)-\(device)-\(index)" }
        if withKeePassXC {
            let value = token(99)
            script.keepassxc = ["-u", value, "Internet/GitHub"]
            setting(ShapeVault.github, "UserName", value)
        }
        for index in 0..<count {
            let entry = entries.randomElement(using: &random)!, group = groups.randomElement(using: &random)!
            let after = [0, 1, 1, 2].randomElement(using: &random)!  // 0: the same second as the step before
            let value = token(index)
            var op: [String: Any]
            switch Int.random(in: 0..<16, using: &random) {
            case 0...4:
                let key = ["UserName", "Password", "URL", "Notes", "Custom \(Int.random(in: 0..<2, using: &random))"].randomElement(using: &random)!
                op = ["op": "setField", "entry": entry.uuidString, "key": key, "value": value]
                setting(entry, key, value)
            case 5:
                op = ["op": "entryCustomData", "entry": entry.uuidString, "key": "k-\(value)", "value": value]
                script.values.append(SetValue(object: entry, value: value))
            case 6:
                op = ["op": "groupCustomData", "group": group.uuidString, "key": "k-\(value)", "value": value]
                script.values.append(SetValue(object: group, value: value))
            case 7:
                op = ["op": "tag", "entry": entry.uuidString, "value": value]
                script.values.append(SetValue(object: entry, value: value))
            case 8:
                op = ["op": "attach", "entry": entry.uuidString, "name": "\(value).txt", "value": value]
                script.values.append(SetValue(object: entry, value: "\(value).txt"))
            case 9:
                op = ["op": "autoTypeWindow", "entry": entry.uuidString, "window": value, "value": "{USERNAME}"]
                script.values.append(SetValue(object: entry, value: value))
            case 10:
                op = ["op": "autoTypeSequence", "entry": entry.uuidString, "value": "{\(value)}"]
                setting(entry, "AutoType sequence", "{\(value)}")
            case 11:
                op = ["op": "icon", "entry": entry.uuidString, "value": Int.random(in: 1..<60, using: &random)]
            case 12:
                let trash = !Bool.random(using: &random)
                op = ["op": trash ? "trashEntry" : "moveEntry", "entry": entry.uuidString, "group": group.uuidString]
                // Sending an entry already in the recycle bin there again deletes it (KeePass).
                if trash && inBin.contains(entry) { script.deleted.insert(entry) }
                if trash { inBin.insert(entry) } else { inBin.remove(entry) }
            case 13:
                let other = groups.filter { $0 != group }.randomElement(using: &random)!
                op = ["op": "moveGroup", "group": group.uuidString, "to": Bool.random(using: &random) ? "root" : other.uuidString]
            case 14:
                op = ["op": "deleteEntry", "entry": entry.uuidString]
                script.deleted.insert(entry)
            default:
                if Bool.random(using: &random) {
                    op = ["op": "historyMaxItems", "value": Int.random(in: 0...1, using: &random)]
                    script.limitsHistory = true
                } else {
                    let id = UUID(uuidString: String(format: "C1000000-0000-0000-%04X-%012llX", index, seed))!
                    op = ["op": "addEntry", "group": group.uuidString, "title": value, "uuid": id.uuidString]
                    script.values.append(SetValue(object: id, value: value))
                }
            }
            op["after"] = after
            script.pykeepass.append(op)
        }
        return script
    }
}

extension Vault {
    /// Every text a value of an object can be found as: fields, tags, attachment names, custom data,
    /// auto-type of entries (current and history) and of groups, by object.
    func textsByObject() -> [UUID: Set<String>] {
        var texts: [UUID: Set<String>] = [:]
        root.forEachGroup { group, _ in
            texts[group.uuid, default: []].formUnion([group.name, group.notes] + group.customData.map(\.value))
            for entry in group.entries {
                for version in [entry] + entry.history {
                    var found = Set(version.fields.map(\.value.text) + version.tags + version.attachments.map(\.name) + version.customData.map(\.value))
                    found.insert(version.autoType.defaultSequence)
                    found.formUnion(version.autoType.associations.map(\.window))
                    texts[entry.uuid, default: []].formUnion(found)
                }
            }
        }
        return texts
    }
}

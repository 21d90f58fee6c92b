import Foundation
import KDBXFormat
import MyPassCore
import MyPassCrypto

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

/// A random edit script for one device of the shape vault: pykeepass operations (which the library
/// device applies too), at most one keepassxc-cli command (made first, on the base's layout), at most
/// one format conversion (cipher, KDF, compression: the library's `convert`, made last), and the
/// values each step set, so that a merge can be checked for losing none.
///
/// What each device kind can do, as the real program can: keepassxc-cli 2.7.4 edits an entry, moves
/// it (`mv`) or sends it to the recycle bin (`rm`) — its `db-edit` changes only the credentials;
/// pykeepass edits anything in the XML tree (entries, groups, every Meta field, the recycle bin and
/// its emptying) but not the outer header; the library does all of it and converts the format.
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
        /// A vault setting (no history): replaced by its own device or contested, it is gone.
        var setting = false
    }

    var pykeepass: [[String: Any]] = []
    /// keepassxc-cli arguments: the command, its options, `database` where the file goes, then the rest.
    var keepassxc: [String]?
    /// The format the device converts its file to after its edits (nil: none).
    var convert: FormatSettings?
    var values: [SetValue] = []
    /// Objects this device deleted (its own deletion saw its own values).
    var deleted: Set<UUID> = []
    /// Whether this device lowered the history limit (older values of its own may be trimmed).
    var limitsHistory = false

    static let entries = [ShapeVault.github, ShapeVault.chase, ShapeVault.old]
    static let groups = [ShapeVault.internet, ShapeVault.bank, ShapeVault.archive]
    /// The object the vault's settings' values are recorded on (`Vault.textsByObject`).
    static let meta = UUID(uuidString: "E1000000-0000-0000-0000-00000000000E")!
    static let memoryProtectionFlags = ["ProtectTitle", "ProtectUserName", "ProtectPassword", "ProtectURL", "ProtectNotes"]

    /// A random format: cipher, KDF (cheap parameters: AES-KDF 50-200 rounds or Argon2 at 1-2 MiB,
    /// 1-3 iterations) and compression.
    static func randomFormat(using random: inout ScriptRandom) -> FormatSettings {
        let cipher = [PayloadCipher.aes256, .chaCha20, .twofish].randomElement(using: &random)!
        let kdf: KDFParameters
        switch Int.random(in: 0..<3, using: &random) {
        case 0: kdf = .aesKDF(seed: Data(repeating: 7, count: 32), rounds: [50, 100, 200].randomElement(using: &random)!)
        default:
            kdf = .argon2(.init(variant: Bool.random(using: &random) ? .argon2d : .argon2id, salt: Data(repeating: 9, count: 32),
                                iterations: UInt64.random(in: 1...3, using: &random), memoryBytes: UInt64.random(in: 1...2, using: &random) << 20,
                                parallelism: 1))
        }
        return FormatSettings(version: .v4_0, cipher: cipher, kdf: kdf, compression: Bool.random(using: &random) ? .gzip : .none)
    }

    /// The same change made on two devices (the same step, with the same value, on each): a field,
    /// a setting, a move or a conversion. Nil for most seeds.
    static func shared(seed: UInt64, using random: inout ScriptRandom) -> EditScript? {
        guard Int.random(in: 0..<4, using: &random) == 0 else { return nil }
        var script = EditScript()
        let entry = entries.randomElement(using: &random)!, value = "s\(seed)-both"
        switch Int.random(in: 0..<5, using: &random) {
        case 0:
            let key = ["UserName", "Password", "Notes"].randomElement(using: &random)!
            script.pykeepass = [["op": "setField", "entry": entry.uuidString, "key": key, "value": value]]
            script.values = [SetValue(object: entry, value: value, slot: key)]
        case 1:
            script.pykeepass = [["op": "metaText", "field": "DatabaseName", "value": value]]
            script.values = [SetValue(object: meta, value: value, slot: "DatabaseName", setting: true)]
        case 2:
            script.pykeepass = [["op": "memoryProtection", "flag": memoryProtectionFlags.randomElement(using: &random)!, "value": true]]
        case 3:
            script.pykeepass = [["op": "moveEntry", "entry": entry.uuidString, "group": groups.randomElement(using: &random)!.uuidString]]
        default:
            script.convert = randomFormat(using: &random)
        }
        for index in script.pykeepass.indices { script.pykeepass[index]["after"] = 1 }
        return script
    }

    /// This script with `other`'s steps after its own (a conversion of both: `other`'s).
    func followed(by other: EditScript?) -> EditScript {
        guard let other else { return self }
        var script = self
        script.pykeepass += other.pykeepass
        script.values += other.values
        script.convert = other.convert ?? convert
        return script
    }

    /// `count` random operations of device `device` in script `seed`.
    static func random(seed: UInt64, device: String, count: Int, using random: inout ScriptRandom, withKeePassXC: Bool) -> EditScript {
        var script = EditScript()
        var lastSet: [String: Int] = [:]  // the value set last into each entry's field or sequence
        var inBin = Set<UUID>()  // entries this script sent to the recycle bin (and did not move out)
        var binEnabled = true
        // Where each base entry is (outside the recycle bin) on this device: a move back returns it there.
        var home: [UUID: UUID] = [ShapeVault.github: ShapeVault.internet, ShapeVault.chase: ShapeVault.bank, ShapeVault.old: ShapeVault.archive]
        /// A value that replaces the one an earlier step set into the same entry's `slot`.
        func setting(_ entry: UUID, _ slot: String, _ value: String, isSetting: Bool = false) {
            if let earlier = lastSet["\(entry) \(slot)"] { script.values[earlier].replaced = true }
            lastSet["\(entry) \(slot)"] = script.values.count
            script.values.append(SetValue(object: entry, value: value, slot: slot, setting: isSetting))
        }
        func token(_ index: Int) -> String { "s\(seed)-\(device)-\(index)" }
        if withKeePassXC {
            let value = token(99)
            switch Int.random(in: 0..<4, using: &random) {
            case 0:
                let group = [("Bank", ShapeVault.bank), ("Archive", ShapeVault.archive)].randomElement(using: &random)!
                script.keepassxc = ["mv", "database", "Internet/GitHub", group.0]
                home[ShapeVault.github] = group.1
            case 1:
                script.keepassxc = ["rm", "database", "Internet/GitHub"]
                inBin.insert(ShapeVault.github)
            default:
                script.keepassxc = ["edit", "-u", value, "database", "Internet/GitHub"]
                setting(ShapeVault.github, "UserName", value)
            }
        }
        for index in 0..<count {
            let entry = entries.randomElement(using: &random)!, group = groups.randomElement(using: &random)!
            let after = [0, 1, 1, 2].randomElement(using: &random)!  // 0: the same second as the step before
            let value = token(index)
            var op: [String: Any]
            var extra: [String: Any]?  // a second step right after this one (a move back)
            switch Int.random(in: 0..<26, using: &random) {
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
                // Sending an entry already in the recycle bin there again deletes it (KeePass); so
                // does sending it anywhere with the bin switched off.
                if trash && (inBin.contains(entry) || !binEnabled) { script.deleted.insert(entry) }
                if trash && binEnabled { inBin.insert(entry) } else { inBin.remove(entry) }
                if !trash { home[entry] = group }
            case 13:
                let other = groups.filter { $0 != group }.randomElement(using: &random)!
                op = ["op": "moveGroup", "group": group.uuidString, "to": Bool.random(using: &random) ? "root" : other.uuidString]
            case 14:
                op = ["op": "deleteEntry", "entry": entry.uuidString]
                script.deleted.insert(entry)
            case 15:
                if Bool.random(using: &random) {
                    op = ["op": "historyMaxItems", "value": Int.random(in: 0...1, using: &random), "settingsChanged": true]
                    script.limitsHistory = true
                } else {
                    let id = UUID(uuidString: String(format: "C1000000-0000-0000-%04X-%012llX", index, seed))!
                    op = ["op": "addEntry", "group": group.uuidString, "title": value, "uuid": id.uuidString]
                    script.values.append(SetValue(object: id, value: value))
                }
            case 16, 17:
                let field = ["DatabaseName", "DatabaseDescription", "DefaultUserName"].randomElement(using: &random)!
                op = ["op": "metaText", "field": field, "value": value]
                setting(meta, field, value, isSetting: true)
            case 18:
                switch Int.random(in: 0..<4, using: &random) {
                case 0: op = ["op": "metaSetting", "field": "Color", "value": String(format: "#%06X", Int.random(in: 0..<0x100_0000, using: &random))]
                case 1: op = ["op": "metaSetting", "field": "MaintenanceHistoryDays", "value": Int.random(in: 1...1000, using: &random)]
                case 2:
                    let size = [300, 20_000_000].randomElement(using: &random)!
                    op = ["op": "metaSetting", "field": "HistoryMaxSize", "value": size]
                    if size < 1000 { script.limitsHistory = true }
                default:
                    op = ["op": "historyMaxItems", "value": Int.random(in: 5...30, using: &random), "settingsChanged": true]
                }
            case 19:
                op = ["op": "memoryProtection", "flag": memoryProtectionFlags.randomElement(using: &random)!, "value": Bool.random(using: &random)]
            case 20:
                if Bool.random(using: &random) {
                    binEnabled.toggle()
                    op = ["op": "recycleBinEnabled", "value": binEnabled]
                } else {
                    let id = UUID(uuidString: String(format: "D1000000-0000-0000-%04X-%012llX", index, seed))!
                    // Its name is not a value kept: two bins fold into one (MERGE.md rule 9).
                    op = ["op": "newRecycleBin", "uuid": id.uuidString, "name": value]
                    binEnabled = true
                    inBin = []
                }
            case 21:
                let id = UUID(uuidString: String(format: "F1000000-0000-0000-%04X-%012llX", index, seed))!
                op = ["op": "customIcon", "uuid": id.uuidString, "data": Data("icon \(value)".utf8).base64EncodedString()]
                script.values.append(SetValue(object: meta, value: id.uuidString))
            case 22:
                op = ["op": "metaCustomData", "key": "k-\(value)", "value": value]
                script.values.append(SetValue(object: meta, value: value))
            case 23:
                op = ["op": "emptyRecycleBin"]
                script.deleted.formUnion(inBin)
                inBin = []
            default:
                if let binned = inBin.sorted(by: { $0.uuidString < $1.uuidString }).randomElement(using: &random) {
                    // Restored from the recycle bin to where it was.
                    op = ["op": "restoreEntry", "entry": binned.uuidString, "group": (home[binned] ?? group).uuidString]
                    inBin.remove(binned)
                } else {
                    // A move, and a move back to where it was.
                    let from = home[entry] ?? group
                    op = ["op": "moveEntry", "entry": entry.uuidString, "group": group.uuidString]
                    extra = ["op": "moveEntry", "entry": entry.uuidString, "group": from.uuidString, "after": [0, 1].randomElement(using: &random)!]
                    inBin.remove(entry)
                }
            }
            op["after"] = after
            script.pykeepass.append(op)
            if let extra { script.pykeepass.append(extra) }
        }
        if Int.random(in: 0..<4, using: &random) == 0 {
            script.convert = randomFormat(using: &random)
        }
        return script
    }
}

extension Vault {
    /// Every text a value of an object can be found as: fields, tags, attachment names, custom data,
    /// auto-type of entries (current and history) and of groups, by object; the vault's name,
    /// description, default user name, custom data values and custom icons' UUIDs as `EditScript.meta`'s.
    func textsByObject() -> [UUID: Set<String>] {
        var texts: [UUID: Set<String>] = [:]
        texts[EditScript.meta] = Set([meta.databaseName, meta.databaseDescription, meta.defaultUserName] + meta.customData.map(\.value)
            + meta.customIcons.map(\.uuid.uuidString))
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

import Foundation
import MyPassCore

/// The third device: this library applies an edit script's pykeepass operations with its own edits
/// (a deletion here writes a tombstone, as KeePass does); its conversion, if any, sets SettingsChanged
/// (the format itself is the script's `convert`).
enum LibraryDevice {
    static func apply(_ script: EditScript, to base: Vault, from start: Timestamp) throws -> Vault {
        var vault = base
        var time = start
        for op in script.pykeepass {
            time = time.adding(Int64(op["after"] as? Int ?? 1))
            let entry = (op["entry"] as? String).flatMap(UUID.init(uuidString:))
            let group = (op["group"] as? String).flatMap { $0 == "root" ? vault.root.uuid : UUID(uuidString: $0) }
            if let entry, vault.root.entry(entry) == nil { continue }
            if let group, vault.root.group(group) == nil { continue }
            let value = op["value"] as? String ?? ""
            switch op["op"] as? String {
            case "setField":
                vault = try vault.updatingEntry(entry!, at: time) { $0.setField(op["key"] as! String, .plain(value)) }
            case "entryCustomData":
                vault = try vault.updatingEntry(entry!, at: time) { $0.customData.append(CustomDataItem(key: op["key"] as! String, value: value)) }
            case "groupCustomData":
                vault = try vault.updatingGroup(group!, at: time) { $0.customData.append(CustomDataItem(key: op["key"] as! String, value: value)) }
            case "tag":
                vault = try vault.updatingEntry(entry!, at: time) { $0.tags.append(value) }
            case "attach":
                let binary = vault.binaries.add(Data(value.utf8), isProtected: false)
                vault = try vault.updatingEntry(entry!, at: time) { $0.attachments.append(Attachment(name: op["name"] as! String, binary: binary)) }
            case "autoTypeWindow":
                vault = try vault.updatingEntry(entry!, at: time) {
                    $0.autoType.associations.append(AutoType.Association(window: op["window"] as! String, keystrokeSequence: value))
                }
            case "autoTypeSequence":
                vault = try vault.updatingEntry(entry!, at: time) { $0.autoType.defaultSequence = value }
            case "icon":
                vault = try vault.updatingEntry(entry!, at: time) { $0.iconID = op["value"] as! Int }
            case "moveEntry":
                vault = try vault.movingEntry(entry!, to: group!, at: time)
            case "trashEntry":
                vault = try vault.deletingEntry(entry!, at: time)
            case "deleteEntry":
                vault = try vault.deletingEntry(entry!, permanently: true, at: time)
            case "moveGroup":
                let destination = (op["to"] as! String) == "root" ? vault.root.uuid : UUID(uuidString: op["to"] as! String)!
                guard vault.root.group(destination) != nil, !(vault.root.pathToGroup(destination) ?? []).contains(group!) else { continue }
                vault = try vault.movingGroup(group!, to: destination, at: time)
            case "historyMaxItems":
                vault.meta.historyMaxItems = op["value"] as! Int
                if op["settingsChanged"] as? Bool == true { vault.meta.settingsChanged = time }
            case "metaText":
                switch op["field"] as! String {
                case "DatabaseName": (vault.meta.databaseName, vault.meta.databaseNameChanged) = (value, time)
                case "DatabaseDescription": (vault.meta.databaseDescription, vault.meta.databaseDescriptionChanged) = (value, time)
                default: (vault.meta.defaultUserName, vault.meta.defaultUserNameChanged) = (value, time)
                }
                vault.meta.settingsChanged = time
            case "metaSetting":
                switch op["field"] as! String {
                case "Color": vault.meta.color = value
                case "MaintenanceHistoryDays": vault.meta.maintenanceHistoryDays = op["value"] as! Int
                default: vault.meta.historyMaxSize = Int64(op["value"] as! Int)
                }
                vault.meta.settingsChanged = time
            case "memoryProtection":
                let on = op["value"] as! Bool
                switch op["flag"] as! String {
                case "ProtectTitle": vault.meta.memoryProtection.protectTitle = on
                case "ProtectUserName": vault.meta.memoryProtection.protectUserName = on
                case "ProtectPassword": vault.meta.memoryProtection.protectPassword = on
                case "ProtectURL": vault.meta.memoryProtection.protectURL = on
                default: vault.meta.memoryProtection.protectNotes = on
                }
                vault.meta.settingsChanged = time
            case "recycleBinEnabled":
                vault.meta.recycleBinEnabled = op["value"] as! Bool
                vault.meta.recycleBinChanged = time
                vault.meta.settingsChanged = time
            case "newRecycleBin":
                vault = try vault.addingGroup(named: op["name"] as! String, to: vault.root.uuid, at: time, uuid: UUID(uuidString: op["uuid"] as! String)!).vault
                vault.meta.recycleBinEnabled = true
                vault.meta.recycleBinUUID = UUID(uuidString: op["uuid"] as! String)!
                vault.meta.recycleBinChanged = time
                vault.meta.settingsChanged = time
            case "customIcon":
                vault.meta.customIcons.append(CustomIcon(uuid: UUID(uuidString: op["uuid"] as! String)!, data: Data(base64Encoded: op["data"] as! String)!))
            case "metaCustomData":
                vault.meta.customData.append(CustomDataItem(key: op["key"] as! String, value: value))
            case "emptyRecycleBin":
                guard let bin = vault.meta.recycleBinUUID, let group = vault.root.group(bin) else { continue }
                var inside: [UUID] = []
                group.forEachGroup { group, _ in inside += group.entries.map(\.uuid) }
                for uuid in inside { vault = try vault.deletingEntry(uuid, permanently: true, at: time) }
            case "restoreEntry":
                vault = try vault.movingEntry(entry!, to: group!, at: time)
            case "addEntry":
                vault = try vault.addingEntry(title: op["title"] as! String, userName: "", password: "", url: "", to: group!, at: time,
                                              uuid: UUID(uuidString: op["uuid"] as! String)!).vault
            default:
                continue
            }
        }
        // The conversion (`convert`), a settings change of its own.
        if script.convert != nil { vault.meta.settingsChanged = time.adding(1) }
        return vault
    }
}

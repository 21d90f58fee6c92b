internal import Foundation
internal import MyPassCore
internal import MyPassCrypto

/// What the XML document holds besides the vault: the KDBX 3.1 header hash to check.
struct DecodedDocument {
    var vault: Vault
    /// `<Meta><HeaderHash>`, present in KDBX 3.1 files.
    var headerHash: Data?
}

/// Builds a `Vault` from the SAX events of the vault document, unmasking protected values with the
/// inner random stream in document order and resolving attachment references into the binary pool.
final class VaultDocumentReader: XMLEventHandler {
    private var stack: [XMLNode] = []
    private let innerStream: StreamCipher?
    /// Attachment contents by the reference number used in the document.
    private var binaryReferences: [Int: BinaryID]
    private var pool: BinaryPool
    private var document: XMLNode?
    private var meta: Meta?
    private var headerHash: Data?

    private init(innerStream: StreamCipher?, binaries: [PooledBinary]) {
        self.innerStream = innerStream
        var pool = BinaryPool()
        var references: [Int: BinaryID] = [:]
        for (index, binary) in binaries.enumerated() {
            references[index] = pool.add(binary.data, isProtected: binary.isProtected)
        }
        self.pool = pool
        self.binaryReferences = references
    }

    /// Reads `xml` into a vault. `binaries` are the KDBX 4 inner-header attachments in order.
    static func read(_ xml: Data, innerStream: StreamCipher?, binaries: [PooledBinary]) throws(KDBXError) -> DecodedDocument {
        let reader = VaultDocumentReader(innerStream: innerStream, binaries: binaries)
        try StrictXMLParser.parse(xml, handler: reader)
        return try reader.finish()
    }

    func startElement(name: String, attributes: [(name: String, value: String)]) throws(KDBXError) {
        if stack.isEmpty {
            guard document == nil, name == "KeePassFile" else {
                throw .corrupt("XML: the document element must be KeePassFile")
            }
        }
        stack.append(XMLNode(name: name, attributes: attributes))
    }

    func characters(_ bytes: UnsafeBufferPointer<UInt8>) {
        stack.last?.text.append(contentsOf: bytes)
    }

    func endElement() throws(KDBXError) {
        guard let node = stack.popLast() else { throw .corrupt("XML: unbalanced end tag") }
        if node.isTrue("Protected") && (node.name == "Value" || node.name == "Binary") {
            try unmask(node)
        }
        guard let parent = stack.last else {
            document = node
            return
        }
        switch (node.name, parent.name) {
        case ("Entry", "Group"):
            parent.entries.append(try decodeEntry(node, isHistoryItem: false))
        case ("Entry", "History"):
            guard stack.count >= 2, stack[stack.count - 2].name == "Entry",
                  stack.count < 3 || stack[stack.count - 3].name != "History" else {
                throw .corrupt("XML: History inside a history item")
            }
            parent.entries.append(try decodeEntry(node, isHistoryItem: true))
        case ("Group", "Group"), ("Group", "Root"):
            parent.groups.append(try decodeGroup(node))
        case ("Meta", "KeePassFile"):
            (meta, headerHash) = try decodeMeta(node)
        default:
            parent.children.append(node)
        }
    }

    /// Base64-decodes a protected value and XORs it with the next bytes of the inner stream.
    private func unmask(_ node: XMLNode) throws(KDBXError) {
        var bytes = [UInt8](try XMLValue.base64(node))
        if let innerStream {
            let result: Result<Void, CryptoError> = bytes.withUnsafeMutableBytes { buffer in
                Result { () throws(CryptoError) in try innerStream.apply(to: buffer) }
            }
            if case .failure(let error) = result { throw .crypto(error) }
        }
        node.unprotectedBytes = bytes
        node.text = []
    }

    private func finish() throws(KDBXError) -> DecodedDocument {
        guard let document else { throw .corrupt("XML: empty document") }
        guard let meta else { throw .corrupt("XML: Meta is missing") }
        guard let rootNode = document.child("Root") else { throw .corrupt("XML: Root is missing") }
        guard rootNode.groups.count == 1, let root = rootNode.groups.first else {
            throw .corrupt("XML: Root must hold exactly one group")
        }
        var deleted: [DeletedObject] = []
        if let deletedNode = rootNode.child("DeletedObjects") {
            for item in deletedNode.children where item.name == "DeletedObject" {
                guard let uuidNode = item.child("UUID"), let timeNode = item.child("DeletionTime") else {
                    throw .corrupt("XML: DeletedObject without UUID or DeletionTime")
                }
                deleted.append(DeletedObject(uuid: try XMLValue.uuid(uuidNode), deletedAt: try XMLValue.time(timeNode)))
            }
        }
        var used = Set<BinaryID>()
        root.forEachGroup { group, _ in
            for entry in group.entries {
                for item in [entry] + entry.history { used.formUnion(item.attachments.map(\.binary)) }
            }
        }
        pool.retainOnly(used)
        let vault = Vault(
            meta: meta, root: root, deletedObjects: deleted, binaries: pool,
            preservedFileElements: document.children.filter { $0.name != "Root" }.map(\.preserved),
            preservedRootElements: rootNode.children.filter { $0.name != "DeletedObjects" }.map(\.preserved))
        return DecodedDocument(vault: vault, headerHash: headerHash)
    }

    // MARK: Elements

    private func decodeTimes(_ node: XMLNode?) throws(KDBXError) -> Times {
        let zero = Timestamp(secondsSinceYearOne: 0)
        var times = Times(allAt: zero)
        guard let node else { return times }
        for child in node.children {
            switch child.name {
            case "CreationTime": times.created = try XMLValue.time(child)
            case "LastModificationTime": times.lastModified = try XMLValue.time(child)
            case "LastAccessTime": times.lastAccessed = try XMLValue.time(child)
            case "ExpiryTime": times.expiryTime = try XMLValue.time(child)
            case "Expires": times.expires = try XMLValue.bool(child)
            case "UsageCount": times.usageCount = try XMLValue.int(child)
            case "LocationChanged": times.locationChanged = try XMLValue.time(child)
            default: break
            }
        }
        return times
    }

    private func decodeCustomData(_ node: XMLNode) throws(KDBXError) -> [CustomDataItem] {
        var items: [CustomDataItem] = []
        for item in node.children where item.name == "Item" {
            items.append(CustomDataItem(
                key: item.child("Key")?.string ?? "", value: item.child("Value")?.string ?? "",
                lastModified: try item.child("LastModificationTime").map { node throws(KDBXError) in try XMLValue.time(node) }))
        }
        return items
    }

    private func decodeEntry(_ node: XMLNode, isHistoryItem: Bool) throws(KDBXError) -> Entry {
        guard let uuidNode = node.child("UUID") else { throw .corrupt("XML: Entry without UUID") }
        var entry = Entry(uuid: try XMLValue.uuid(uuidNode), times: try decodeTimes(node.child("Times")))
        for child in node.children {
            switch child.name {
            case "UUID", "Times": break
            case "IconID": entry.iconID = Int(try XMLValue.int(child))
            case "CustomIconUUID": entry.customIconUUID = try XMLValue.optionalUUID(child)
            case "ForegroundColor": entry.foregroundColor = child.string
            case "BackgroundColor": entry.backgroundColor = child.string
            case "OverrideURL": entry.overrideURL = child.string
            case "QualityCheck": entry.qualityCheck = try XMLValue.optionalBool(child)
            case "Tags": entry.tags = XMLValue.tags(child)
            case "PreviousParentGroup": entry.previousParentGroup = try XMLValue.optionalUUID(child)
            case "String": entry.fields.append(try decodeField(child))
            case "Binary": entry.attachments.append(try decodeAttachment(child))
            case "AutoType": entry.autoType = try decodeAutoType(child)
            case "CustomData": entry.customData = try decodeCustomData(child)
            case "History":
                if isHistoryItem { throw .corrupt("XML: History inside a history item") }
                entry.history = child.entries
            default: entry.preserved.append(child.preserved)
            }
        }
        return entry
    }

    private func decodeField(_ node: XMLNode) throws(KDBXError) -> EntryField {
        guard let key = node.child("Key")?.string else { throw .corrupt("XML: String without Key") }
        guard let valueNode = node.child("Value") else { return EntryField(key: key, value: .plain("")) }
        if let bytes = valueNode.unprotectedBytes {
            return EntryField(key: key, value: .protected(ProtectedValue(String(decoding: bytes, as: UTF8.self))))
        }
        // ProtectInMemory: protected by flag without inner-stream masking (KDBX XML exports).
        let isProtected = valueNode.isTrue("ProtectInMemory")
        return EntryField(key: key, value: FieldValue(valueNode.string, isProtected: isProtected))
    }

    private func decodeAttachment(_ node: XMLNode) throws(KDBXError) -> Attachment {
        guard let name = node.child("Key")?.string, let valueNode = node.child("Value") else {
            throw .corrupt("XML: Binary without Key or Value")
        }
        if let reference = valueNode.attribute("Ref") {
            guard let index = Int(reference), let id = binaryReferences[index] else {
                throw .corrupt("XML: attachment reference \(reference) does not exist")
            }
            return Attachment(name: name, binary: id)
        }
        // An inline attachment (no Ref): the value itself is the content.
        let data: Data
        if let bytes = valueNode.unprotectedBytes { data = Data(bytes) } else { data = try XMLValue.base64(valueNode) }
        return Attachment(name: name, binary: pool.add(data, isProtected: valueNode.unprotectedBytes != nil))
    }

    private func decodeAutoType(_ node: XMLNode) throws(KDBXError) -> AutoType {
        var autoType = AutoType()
        for child in node.children {
            switch child.name {
            case "Enabled": autoType.isEnabled = try XMLValue.bool(child)
            case "DataTransferObfuscation": autoType.dataTransferObfuscation = Int(try XMLValue.int(child))
            case "DefaultSequence": autoType.defaultSequence = child.string
            case "Association":
                autoType.associations.append(AutoType.Association(
                    window: child.child("Window")?.string ?? "",
                    keystrokeSequence: child.child("KeystrokeSequence")?.string ?? ""))
            default: autoType.preserved.append(child.preserved)
            }
        }
        return autoType
    }

    private func decodeGroup(_ node: XMLNode) throws(KDBXError) -> Group {
        guard let uuidNode = node.child("UUID") else { throw .corrupt("XML: Group without UUID") }
        var group = Group(
            uuid: try XMLValue.uuid(uuidNode), name: "", times: try decodeTimes(node.child("Times")),
            groups: node.groups, entries: node.entries)
        for child in node.children {
            switch child.name {
            case "UUID", "Times": break
            case "Name": group.name = child.string
            case "Notes": group.notes = child.string
            case "IconID": group.iconID = Int(try XMLValue.int(child))
            case "CustomIconUUID": group.customIconUUID = try XMLValue.optionalUUID(child)
            case "IsExpanded": group.isExpanded = try XMLValue.bool(child)
            case "DefaultAutoTypeSequence": group.defaultAutoTypeSequence = child.string
            case "EnableAutoType": group.enableAutoType = try XMLValue.optionalBool(child)
            case "EnableSearching": group.enableSearching = try XMLValue.optionalBool(child)
            case "LastTopVisibleEntry": group.lastTopVisibleEntry = try XMLValue.optionalUUID(child)
            case "PreviousParentGroup": group.previousParentGroup = try XMLValue.optionalUUID(child)
            case "Tags": group.tags = XMLValue.tags(child)
            case "CustomData": group.customData = try decodeCustomData(child)
            default: group.preserved.append(child.preserved)
            }
        }
        return group
    }

    private func decodeMeta(_ node: XMLNode) throws(KDBXError) -> (Meta, Data?) {
        var meta = Meta(generator: "")
        var headerHash: Data?
        func time(_ child: XMLNode) throws(KDBXError) -> Timestamp { try XMLValue.time(child) }
        for child in node.children {
            switch child.name {
            case "Generator": meta.generator = child.string
            case "HeaderHash": headerHash = try XMLValue.base64(child)
            case "SettingsChanged": meta.settingsChanged = try time(child)
            case "DatabaseName": meta.databaseName = child.string
            case "DatabaseNameChanged": meta.databaseNameChanged = try time(child)
            case "DatabaseDescription": meta.databaseDescription = child.string
            case "DatabaseDescriptionChanged": meta.databaseDescriptionChanged = try time(child)
            case "DefaultUserName": meta.defaultUserName = child.string
            case "DefaultUserNameChanged": meta.defaultUserNameChanged = try time(child)
            case "MaintenanceHistoryDays": meta.maintenanceHistoryDays = Int(try XMLValue.int(child))
            case "Color": meta.color = child.string
            case "MasterKeyChanged": meta.masterKeyChanged = try time(child)
            case "MasterKeyChangeRec": meta.masterKeyChangeRecommended = try XMLValue.int(child)
            case "MasterKeyChangeForce": meta.masterKeyChangeForced = try XMLValue.int(child)
            case "MasterKeyChangeForceOnce": meta.masterKeyChangeForceOnce = try XMLValue.bool(child)
            case "MemoryProtection":
                for flag in child.children {
                    let value = try XMLValue.bool(flag)
                    switch flag.name {
                    case "ProtectTitle": meta.memoryProtection.protectTitle = value
                    case "ProtectUserName": meta.memoryProtection.protectUserName = value
                    case "ProtectPassword": meta.memoryProtection.protectPassword = value
                    case "ProtectURL": meta.memoryProtection.protectURL = value
                    case "ProtectNotes": meta.memoryProtection.protectNotes = value
                    default: break
                    }
                }
            case "CustomIcons":
                for icon in child.children where icon.name == "Icon" {
                    guard let uuidNode = icon.child("UUID"), let dataNode = icon.child("Data") else {
                        throw .corrupt("XML: custom icon without UUID or Data")
                    }
                    meta.customIcons.append(CustomIcon(
                        uuid: try XMLValue.uuid(uuidNode), data: try XMLValue.base64(dataNode),
                        name: icon.child("Name")?.string,
                        lastModified: try icon.child("LastModificationTime").map { node throws(KDBXError) in try time(node) }))
                }
            case "RecycleBinEnabled": meta.recycleBinEnabled = try XMLValue.bool(child)
            case "RecycleBinUUID": meta.recycleBinUUID = try XMLValue.optionalUUID(child)
            case "RecycleBinChanged": meta.recycleBinChanged = try time(child)
            case "EntryTemplatesGroup": meta.entryTemplatesGroup = try XMLValue.optionalUUID(child)
            case "EntryTemplatesGroupChanged": meta.entryTemplatesGroupChanged = try time(child)
            case "HistoryMaxItems": meta.historyMaxItems = Int(try XMLValue.int(child))
            case "HistoryMaxSize": meta.historyMaxSize = try XMLValue.int(child)
            case "LastSelectedGroup": meta.lastSelectedGroup = try XMLValue.optionalUUID(child)
            case "LastTopVisibleGroup": meta.lastTopVisibleGroup = try XMLValue.optionalUUID(child)
            case "CustomData": meta.customData = try decodeCustomData(child)
            case "Binaries": try decodeMetaBinaries(child)
            default: meta.preserved.append(child.preserved)
            }
        }
        return (meta, headerHash)
    }

    /// KDBX 3.1 keeps attachment contents in `<Meta><Binaries>`, optionally gzip-compressed.
    private func decodeMetaBinaries(_ node: XMLNode) throws(KDBXError) {
        for binary in node.children where binary.name == "Binary" {
            guard let idText = binary.attribute("ID"), let id = Int(idText) else {
                throw .corrupt("XML: Meta binary without a numeric ID")
            }
            var data: Data
            if let bytes = binary.unprotectedBytes { data = Data(bytes) } else { data = try XMLValue.base64(binary) }
            if binary.isTrue("Compressed") {
                data = try Gzip.decompress(data, limit: ResourceLimits.standard.maximumPayloadBytes)
            }
            guard binaryReferences[id] == nil else { throw .corrupt("XML: Meta binary ID \(id) repeated") }
            binaryReferences[id] = pool.add(data, isProtected: binary.unprotectedBytes != nil)
        }
    }
}

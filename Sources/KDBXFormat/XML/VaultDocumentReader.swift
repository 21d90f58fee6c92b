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
/// It receives the events `XMLEventRecorder` recorded on the parsing thread (`RecordedEvent.replay`),
/// then `finish` returns the vault.
/// Confined to one thread at a time, so its hot state is `@exclusivity(unchecked)`: the runtime's
/// access checks otherwise cost about a fifth of an open and up to half of a save (`mypass-bench open`).
final class VaultDocumentReader {
    private let table = ElementTable()
    private let names = ElementNameTable()
    /// Indices of the open elements, innermost last.
    @exclusivity(unchecked) private var stack: [Int] = []
    /// Converted children of the open groups (and of Root), innermost last.
    @exclusivity(unchecked) private var groupFrames: [(entries: [Entry], groups: [Group])] = []
    /// Converted history items of the entry being read, moved into it when it ends.
    @exclusivity(unchecked) private var historyItems = ScratchBuffer<Entry>(capacity: 16)
    private let innerStream: StreamCipher?
    /// Attachment contents by the reference number used in the document.
    @exclusivity(unchecked) private var binaryReferences: [Int: BinaryID]
    @exclusivity(unchecked) private var pool: BinaryPool
    @exclusivity(unchecked) private var meta: Meta?
    @exclusivity(unchecked) private var headerHash: Data?
    @exclusivity(unchecked) private var documentEnded = false
    /// Another version of this vault already in memory, whose storage equal versions take.
    private let donor: EntryStorageDonor?
    /// Field names met so far, each stored once (`named`).
    @exclusivity(unchecked) private var fieldNames: [String: EntryField] = [:]

    /// A reader for a document whose KDBX 4 inner-header attachments are `binaries`, in order;
    /// versions equal to one of `donor`'s take its storage.
    init(innerStream: StreamCipher?, binaries: [PooledBinary], donor: EntryStorageDonor? = nil) {
        self.innerStream = innerStream
        self.donor = donor
        var pool = BinaryPool()
        var references: [Int: BinaryID] = [:]
        for (index, binary) in binaries.enumerated() {
            references[index] = pool.add(binary.data, isProtected: binary.isProtected)
        }
        self.pool = pool
        self.binaryReferences = references
    }

    /// After the document's last event: the vault.
    func finish() throws(KDBXError) -> DecodedDocument {
        try assemble()
    }

    // MARK: Events

    /// An element starts. Its name (and attribute names) `XMLEventRecorder` interned: its table and
    /// this reader's agree because every new name is announced first (`defineName`).
    /// Its attributes follow (`attribute`).
    func startElement(_ name: ElementName) throws(KDBXError) {
        let parent = stack.last ?? -1
        if parent < 0 {
            guard !documentEnded, name == .keePassFile else { throw .corrupt("XML: the document element must be KeePassFile") }
        }
        // Anywhere else its groups would be read into a frame nothing takes, and silently dropped.
        if name == .root && (parent < 0 || table.name(parent) != .keePassFile) { throw .corrupt("XML: Root outside KeePassFile") }
        let isConvertedSeparately = name == .entry || name == .group
        let index = table.append(name, parent: parent, linked: !isConvertedSeparately)
        stack.append(index)
        if name == .group || name == .root { groupFrames.append(([], [])) }
    }

    /// An attribute of the element that started last.
    func attribute(_ name: ElementName, value: UnsafeBufferPointer<UInt8>) {
        table.addAttribute(name, value: String(decoding: value, as: UTF8.self))
    }

    /// A name the recorder interned for the first time (it gets the next identifier here too).
    func defineName(_ name: String) {
        _ = names.intern(name)
    }

    /// Character data inside the innermost open element.
    func characters(_ bytes: UnsafeBufferPointer<UInt8>) {
        if let index = stack.last { table.appendText(bytes, to: index) }
    }

    /// The innermost open element ends: entries, groups and Meta become model values here.
    func endElement() throws(KDBXError) {
        guard let index = stack.popLast() else { throw .corrupt("XML: unbalanced end tag") }
        let name = table.name(index)
        if (name == .value || name == .binary) && table.isTrue(index, .protectedAttribute) {
            try unmask(index)
        }
        let parentName = stack.last.map { table.name($0) }
        switch (name, parentName) {
        case (.entry, .group?):
            let latest = historyItems.last
            var entry = try decodeEntry(index, isHistoryItem: false, earlier: latest)
            // Each field's name and value came from `earlier` as it was decoded; the collections remain.
            if let latest { entry.shareCollections(with: latest.pointee) }
            entry.history = historyItems.takeAll()
            if let donor { entry = donor.sharing(entry) }
            groupFrames[groupFrames.count - 1].entries.append(entry)
            table.truncate(to: index)
        case (.entry, .history?):
            guard stack.count >= 2, table.name(stack[stack.count - 2]) == .entry,
                  !stack.dropLast(2).contains(where: { table.name($0) == .history }) else {
                throw .corrupt("XML: History inside a history item")
            }
            let earlier = historyItems.last
            var item = try decodeEntry(index, isHistoryItem: true, earlier: earlier)
            if let earlier { item.shareCollections(with: earlier.pointee) }
            historyItems.append(item)
            table.truncate(to: index)
        case (.entry, _):
            throw .corrupt("XML: Entry outside a group")
        case (.group, .group?), (.group, .root?):
            let frame = groupFrames.removeLast()
            let group = try decodeGroup(index, frame: frame)
            groupFrames[groupFrames.count - 1].groups.append(group)
            table.truncate(to: index)
        case (.group, _):
            throw .corrupt("XML: Group outside Root")
        case (.meta, .keePassFile?):
            (meta, headerHash) = try decodeMeta(index)
            table.truncate(to: index)
        case (_, nil):
            documentEnded = true
        default:
            break
        }
    }

    /// Base64-decodes a protected value and XORs it with the next bytes of the inner stream, into
    /// the table's wiped scratch (the only plain copy before the value is masked in memory).
    private func unmask(_ index: Int) throws(KDBXError) {
        let text = table.bytes(index)
        try table.setUnprotected(for: index, maximumCount: Base64.maximumDecodedCount(text.count)) { output throws(KDBXError) in
            guard let count = Base64.decode(text, into: output) else {
                throw .corrupt("\(names.string(table.name(index))): invalid base64")
            }
            if let innerStream {
                do throws(CryptoError) {
                    try innerStream.apply(to: UnsafeMutableRawBufferPointer(start: output, count: count))
                } catch {
                    throw .crypto(error)
                }
            }
            return count
        }
    }

    private func assemble() throws(KDBXError) -> DecodedDocument {
        guard documentEnded, table.count > 0 else { throw .corrupt("XML: empty document") }
        guard let meta else { throw .corrupt("XML: Meta is missing") }
        guard let rootIndex = table.child(0, .root), let rootFrame = groupFrames.first else {
            throw .corrupt("XML: Root is missing")
        }
        guard rootFrame.groups.count == 1, let root = rootFrame.groups.first, rootFrame.entries.isEmpty else {
            throw .corrupt("XML: Root must hold exactly one group")
        }
        var deleted: [DeletedObject] = []
        if let deletedIndex = table.child(rootIndex, .deletedObjects) {
            for item in table.children(deletedIndex) where table.name(item) == .deletedObject {
                guard let uuidIndex = table.child(item, .uuid), let timeIndex = table.child(item, .deletionTime) else {
                    throw .corrupt("XML: DeletedObject without UUID or DeletionTime")
                }
                deleted.append(DeletedObject(uuid: try table.uuid(uuidIndex, names: names),
                                             deletedAt: try table.time(timeIndex, names: names)))
            }
        }
        pool.retainOnly(root.referencedBinaries())
        let vault = Vault(
            meta: meta, root: root, deletedObjects: deleted, binaries: pool,
            preservedFileElements: table.children(0).filter { ![.root, .meta].contains(table.name($0)) }
                .map { table.preserved($0, names: names) },
            preservedRootElements: table.children(rootIndex).filter { table.name($0) != .deletedObjects }
                .map { table.preserved($0, names: names) })
        return DecodedDocument(vault: vault, headerHash: headerHash)
    }

    // MARK: Elements

    private func optionalTime(_ index: Int?) throws(KDBXError) -> Timestamp? {
        guard let index else { return nil }
        return try table.time(index, names: names)
    }

    private func decodeTimes(_ index: Int?) throws(KDBXError) -> Times {
        var times = Times(allAt: Timestamp(secondsSinceYearOne: 0))
        guard let index else { return times }
        try table.forEachChild(index) { child throws(KDBXError) in
            switch table.name(child) {
            case .creationTime: times.created = try table.time(child, names: names)
            case .lastModificationTime: times.lastModified = try table.time(child, names: names)
            case .lastAccessTime: times.lastAccessed = try table.time(child, names: names)
            case .expiryTime: times.expiryTime = try table.time(child, names: names)
            case .expires: times.expires = try table.bool(child, names: names)
            case .usageCount: times.usageCount = try table.int(child, names: names)
            case .locationChanged: times.locationChanged = try table.time(child, names: names)
            default: break
            }
        }
        return times
    }

    private func decodeCustomData(_ index: Int) throws(KDBXError) -> [CustomDataItem] {
        var items: [CustomDataItem] = []
        for item in table.children(index) where table.name(item) == .item {
            items.append(CustomDataItem(
                key: table.child(item, .key).map { table.string($0) } ?? "",
                value: table.child(item, .value).map { table.string($0) } ?? "",
                lastModified: try optionalTime(table.child(item, .lastModificationTime))))
        }
        return items
    }

    /// Entry `index`, without its history (the caller adds it). `earlier` is the version decoded just
    /// before it (the previous history item, or the last one for the current entry), in place: field
    /// names and values equal to its are taken from it instead of being made again, so the versions
    /// share their storage from the start. The donor's version with the same modification time, when
    /// there is one, takes its place, and a history item equal to it is that version.
    private func decodeEntry(_ index: Int, isHistoryItem: Bool, earlier: UnsafePointer<Entry>?) throws(KDBXError) -> Entry {
        guard let uuidIndex = table.child(index, .uuid) else { throw .corrupt("XML: Entry without UUID") }
        let uuid = try table.uuid(uuidIndex, names: names)
        let times = try decodeTimes(table.child(index, .times))
        guard let donated = donor?.version(of: uuid, lastModified: times.lastModified) else {
            return try decodeEntry(index, uuid: uuid, times: times, isHistoryItem: isHistoryItem, earlier: earlier)
        }
        let entry = try withUnsafePointer(to: donated) { donated throws(KDBXError) in
            try decodeEntry(index, uuid: uuid, times: times, isHistoryItem: isHistoryItem, earlier: donated)
        }
        return isHistoryItem && entry == donated ? donated : entry
    }

    private func decodeEntry(
        _ index: Int, uuid: UUID, times: Times, isHistoryItem: Bool, earlier: UnsafePointer<Entry>?
    ) throws(KDBXError) -> Entry {
        var fieldCount = 0
        try table.forEachChild(index) { child throws(KDBXError) in if table.name(child) == .string { fieldCount += 1 } }
        // One allocation for the fields instead of one per doubling.
        var fields: [EntryField] = []
        fields.reserveCapacity(fieldCount)
        var iconID = 0, tags: [String] = [], attachments: [Attachment] = []
        // The rarely set properties are gathered first: the entry gets them in one piece.
        var customIconUUID: UUID?, previousParentGroup: UUID?, qualityCheck: Bool?
        var foregroundColor = "", backgroundColor = "", overrideURL = ""
        var autoType = AutoType(), customData: [CustomDataItem] = [], preserved: [PreservedXML] = []
        try table.forEachChild(index) { child throws(KDBXError) in
            switch table.name(child) {
            case .uuid, .times: break
            case .iconID: iconID = Int(try table.int(child, names: names))
            case .customIconUUID: customIconUUID = try table.optionalUUID(child, names: names)
            case .foregroundColor: foregroundColor = table.string(child)
            case .backgroundColor: backgroundColor = table.string(child)
            case .overrideURL: overrideURL = table.string(child)
            case .qualityCheck: qualityCheck = try table.optionalBool(child, names: names)
            case .tags: tags = table.tags(child, reusing: earlier?.pointee.tags ?? [])
            case .previousParentGroup: previousParentGroup = try table.optionalUUID(child, names: names)
            case .string: fields.append(try decodeField(child, position: fields.count, earlier: earlier))
            case .binary: attachments.append(try decodeAttachment(child))
            case .autoType: autoType = try decodeAutoType(child)
            case .customData: customData = try decodeCustomData(child)
            case .history: if isHistoryItem { throw .corrupt("XML: History inside a history item") }
            default: preserved.append(table.preserved(child, names: names))
            }
        }
        return Entry(
            uuid: uuid, iconID: iconID, customIconUUID: customIconUUID, foregroundColor: foregroundColor,
            backgroundColor: backgroundColor, overrideURL: overrideURL, qualityCheck: qualityCheck, tags: tags, times: times,
            fields: fields, attachments: attachments, autoType: autoType, customData: customData,
            previousParentGroup: previousParentGroup, history: [], preserved: preserved)
    }

    /// Field `index`, the `position`th of its entry; its name and value are `earlier`'s when equal.
    private func decodeField(_ index: Int, position: Int, earlier: UnsafePointer<Entry>?) throws(KDBXError) -> EntryField {
        guard let keyIndex = table.child(index, .key) else { throw .corrupt("XML: String without Key") }
        let valueIndex = table.child(index, .value)
        if let earlier {
            let shared = try earlier.pointee.fields.withUnsafeBufferPointer { fields throws(KDBXError) -> EntryField? in
                guard let match = fields.index(named: table.bytes(keyIndex), near: position) else { return nil }
                let field = fields.baseAddress! + match
                return EntryField(nameOf: field.pointee, value: try decodeValue(valueIndex, earlier: field))
            }
            if let shared { return shared }
        }
        return named(table.string(keyIndex), try decodeValue(valueIndex, earlier: nil))
    }

    /// A field named `key`, its name stored once per document (the first few hundred names).
    private func named(_ key: String, _ value: FieldValue) -> EntryField {
        if let known = fieldNames[key] { return EntryField(nameOf: known, value: value) }
        let field = EntryField(key: key, value: value)
        if fieldNames.count < 512 { fieldNames[key] = EntryField(nameOf: field, value: .plain("")) }
        return field
    }

    /// The value element `index` of a field (none: empty); the value of `earlierField` (in place)
    /// when equal.
    private func decodeValue(_ index: Int?, earlier earlierField: UnsafePointer<EntryField>?) throws(KDBXError) -> FieldValue {
        guard let valueIndex = index else { return .plain("") }
        if let bytes = table.unprotectedBytes(valueIndex) {
            // Invalid UTF-8 is repaired exactly as String(decoding:) would, then masked. No String
            // is made of the secret: the table wipes its plain bytes, and a repaired copy is wiped once masked.
            guard PlainUTF8.isValid(bytes) else {
                return .protected(ProtectedValue(maskingUTF8: PlainUTF8.repaired(bytes)))
            }
            var candidate: ProtectedValue?
            if case .protected(let value)? = earlierField?.pointee.value { candidate = value }
            return .protected(ProtectedValue(maskingUTF8: bytes, reusing: candidate))
        }
        // ProtectInMemory: protected by flag without inner-stream masking (XML exports).
        if table.isTrue(valueIndex, .protectInMemoryAttribute) {
            return .protected(ProtectedValue(table.string(valueIndex)))
        }
        if let earlierField, case .plain(let text) = earlierField.pointee.value, text.hasUTF8(table.bytes(valueIndex)) {
            return .plain(text)
        }
        return .plain(table.string(valueIndex))
    }

    private func decodeAttachment(_ index: Int) throws(KDBXError) -> Attachment {
        guard let keyIndex = table.child(index, .key), let valueIndex = table.child(index, .value) else {
            throw .corrupt("XML: Binary without Key or Value")
        }
        let name = table.string(keyIndex)
        if let reference = table.attribute(valueIndex, .refAttribute) {
            guard let number = Int(reference), let id = binaryReferences[number] else {
                throw .corrupt("XML: attachment reference \(reference) does not exist")
            }
            return Attachment(name: name, binary: id)
        }
        // An inline attachment (no Ref): the value itself is the content.
        if let bytes = table.unprotectedBytes(valueIndex) {
            return Attachment(name: name, binary: pool.add(Data(bytes), isProtected: true))
        }
        return Attachment(name: name, binary: pool.add(try table.base64(valueIndex, names: names), isProtected: false))
    }

    private func decodeAutoType(_ index: Int) throws(KDBXError) -> AutoType {
        var autoType = AutoType()
        try table.forEachChild(index) { child throws(KDBXError) in
            switch table.name(child) {
            case .enabled: autoType.isEnabled = try table.bool(child, names: names)
            case .dataTransferObfuscation: autoType.dataTransferObfuscation = Int(try table.int(child, names: names))
            case .defaultSequence: autoType.defaultSequence = table.string(child)
            case .association:
                autoType.associations.append(AutoType.Association(
                    window: table.child(child, .window).map { table.string($0) } ?? "",
                    keystrokeSequence: table.child(child, .keystrokeSequence).map { table.string($0) } ?? ""))
            default: autoType.preserved.append(table.preserved(child, names: names))
            }
        }
        return autoType
    }

    /// `entries` in an array of exactly their number: appending grew it to up to twice that, and a
    /// vault keeps every group's entries (at 100,000 entries the slack was 10-20 MB per vault).
    private static func exactlySized(_ entries: [Entry]) -> [Entry] {
        entries.capacity > entries.count ? Array(entries[...]) : entries
    }

    private func decodeGroup(_ index: Int, frame: (entries: [Entry], groups: [Group])) throws(KDBXError) -> Group {
        guard let uuidIndex = table.child(index, .uuid) else { throw .corrupt("XML: Group without UUID") }
        var group = Group(
            uuid: try table.uuid(uuidIndex, names: names), name: "", times: try decodeTimes(table.child(index, .times)),
            groups: frame.groups, entries: Self.exactlySized(frame.entries))
        for child in table.children(index) {
            switch table.name(child) {
            case .uuid, .times: break
            case .name: group.name = table.string(child)
            case .notes: group.notes = table.string(child)
            case .iconID: group.iconID = Int(try table.int(child, names: names))
            case .customIconUUID: group.customIconUUID = try table.optionalUUID(child, names: names)
            case .isExpanded: group.isExpanded = try table.bool(child, names: names)
            case .defaultAutoTypeSequence: group.defaultAutoTypeSequence = table.string(child)
            case .enableAutoType: group.enableAutoType = try table.optionalBool(child, names: names)
            case .enableSearching: group.enableSearching = try table.optionalBool(child, names: names)
            case .lastTopVisibleEntry: group.lastTopVisibleEntry = try table.optionalUUID(child, names: names)
            case .previousParentGroup: group.previousParentGroup = try table.optionalUUID(child, names: names)
            case .tags: group.tags = table.tags(child)
            case .customData: group.customData = try decodeCustomData(child)
            default: group.preserved.append(table.preserved(child, names: names))
            }
        }
        return group
    }

    private func decodeMeta(_ index: Int) throws(KDBXError) -> (Meta, Data?) {
        var meta = Meta(generator: "")
        var headerHash: Data?
        for child in table.children(index) {
            let name = table.name(child)
            switch name {
            case .generator: meta.generator = table.string(child)
            case .headerHash: headerHash = try table.base64(child, names: names)
            case .settingsChanged: meta.settingsChanged = try table.time(child, names: names)
            case .databaseName: meta.databaseName = table.string(child)
            case .databaseNameChanged: meta.databaseNameChanged = try table.time(child, names: names)
            case .databaseDescription: meta.databaseDescription = table.string(child)
            case .databaseDescriptionChanged: meta.databaseDescriptionChanged = try table.time(child, names: names)
            case .defaultUserName: meta.defaultUserName = table.string(child)
            case .defaultUserNameChanged: meta.defaultUserNameChanged = try table.time(child, names: names)
            case .maintenanceHistoryDays: meta.maintenanceHistoryDays = Int(try table.int(child, names: names))
            case .color: meta.color = table.string(child)
            case .masterKeyChanged: meta.masterKeyChanged = try table.time(child, names: names)
            case .masterKeyChangeRec: meta.masterKeyChangeRecommended = try table.int(child, names: names)
            case .masterKeyChangeForce: meta.masterKeyChangeForced = try table.int(child, names: names)
            case .masterKeyChangeForceOnce: meta.masterKeyChangeForceOnce = try table.bool(child, names: names)
            case .memoryProtection:
                for flag in table.children(child) {
                    let value = try table.bool(flag, names: names)
                    switch table.name(flag) {
                    case .protectTitle: meta.memoryProtection.protectTitle = value
                    case .protectUserName: meta.memoryProtection.protectUserName = value
                    case .protectPassword: meta.memoryProtection.protectPassword = value
                    case .protectURL: meta.memoryProtection.protectURL = value
                    case .protectNotes: meta.memoryProtection.protectNotes = value
                    default: break
                    }
                }
            case .customIcons:
                for icon in table.children(child) where table.name(icon) == .icon {
                    guard let uuidIndex = table.child(icon, .uuid), let dataIndex = table.child(icon, .data) else {
                        throw .corrupt("XML: custom icon without UUID or Data")
                    }
                    meta.customIcons.append(CustomIcon(
                        uuid: try table.uuid(uuidIndex, names: names), data: try table.base64(dataIndex, names: names),
                        name: table.child(icon, .name).map { table.string($0) },
                        lastModified: try optionalTime(table.child(icon, .lastModificationTime))))
                }
            case .recycleBinEnabled: meta.recycleBinEnabled = try table.bool(child, names: names)
            case .recycleBinUUID: meta.recycleBinUUID = try table.optionalUUID(child, names: names)
            case .recycleBinChanged: meta.recycleBinChanged = try table.time(child, names: names)
            case .entryTemplatesGroup: meta.entryTemplatesGroup = try table.optionalUUID(child, names: names)
            case .entryTemplatesGroupChanged: meta.entryTemplatesGroupChanged = try table.time(child, names: names)
            case .historyMaxItems: meta.historyMaxItems = Int(try table.int(child, names: names))
            case .historyMaxSize: meta.historyMaxSize = try table.int(child, names: names)
            case .lastSelectedGroup: meta.lastSelectedGroup = try table.optionalUUID(child, names: names)
            case .lastTopVisibleGroup: meta.lastTopVisibleGroup = try table.optionalUUID(child, names: names)
            case .customData: meta.customData = try decodeCustomData(child)
            case .binaries: try decodeMetaBinaries(child)
            default: meta.preserved.append(table.preserved(child, names: names))
            }
        }
        return (meta, headerHash)
    }

    /// KDBX 3.1 keeps attachment contents in `<Meta><Binaries>`, optionally gzip-compressed.
    private func decodeMetaBinaries(_ index: Int) throws(KDBXError) {
        for binary in table.children(index) where table.name(binary) == .binary {
            guard let idText = table.attribute(binary, .idAttribute), let id = Int(idText) else {
                throw .corrupt("XML: Meta binary without a numeric ID")
            }
            let isProtected = table.unprotectedBytes(binary) != nil
            var data: Data
            if let bytes = table.unprotectedBytes(binary) { data = Data(bytes) } else { data = try table.base64(binary, names: names) }
            // KeePassXC writes a zero-byte attachment as an empty element, Compressed="True" and no
            // gzip bytes at all: empty content, not a truncated stream.
            if table.isTrue(binary, .compressedAttribute) && !data.isEmpty {
                data = try Gzip.decompress(data, limit: ResourceLimits.standard.maximumPayloadBytes)
            }
            guard binaryReferences[id] == nil else { throw .corrupt("XML: Meta binary ID \(id) repeated") }
            binaryReferences[id] = pool.add(data, isProtected: isProtected)
        }
    }
}

extension UnsafeBufferPointer<EntryField> {
    /// The index of the field whose name has the UTF-8 bytes `name`, looked for first at `hint`
    /// (versions of an entry usually keep their fields in the same order).
    fileprivate func index(named name: UnsafeBufferPointer<UInt8>, near hint: Int) -> Int? {
        if hint < count, self[hint].key.hasUTF8(name) { return hint }
        return firstIndex { $0.key.hasUTF8(name) }
    }
}

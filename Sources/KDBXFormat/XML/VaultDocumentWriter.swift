internal import Foundation
internal import MyPassCore
internal import MyPassCrypto

/// Writes a `Vault` as the KeePass XML document for a given container version, masking protected
/// values with the inner random stream in document order.
struct VaultDocumentWriter {
    let vault: Vault
    let version: KDBXVersion
    var innerStream: StreamCipher?
    /// KDBX 3.1: SHA-256 of the outer header, written to `<Meta><HeaderHash>`.
    let headerHash: Data?
    /// Reference numbers of the attachment contents, in the order they are stored.
    let binaryOrder: [BinaryID]
    /// KDBX 3.1: whether Meta binaries are gzip-compressed.
    let compressMetaBinaries: Bool
    /// A decrypted export (KeePass's "XML 2.x" format): protected values in plain text marked
    /// `ProtectInMemory`, attachments in `<Meta><Binaries>`, times in ISO 8601.
    var plainExport = false
    /// Versions per piece of a save written on two threads (`DocumentPieces`); nil: on this thread alone.
    var versionsPerPiece: Int? = ProcessInfo.processInfo.activeProcessorCount > 1 ? DocumentPieces.versionsPerPiece : nil

    private var referenceNumbers: [BinaryID: Int] {
        Dictionary(uniqueKeysWithValues: binaryOrder.enumerated().map { ($1, $0) })
    }

    /// The whole document in memory.
    func write() throws(KDBXError) -> Data {
        var document = Data()
        try write { bytes throws(KDBXError) in document.append(contentsOf: bytes) }
        return document
    }

    /// Streams the document to `sink` in pieces.
    func write(to sink: @escaping XMLStreamWriter.Sink) throws(KDBXError) {
        let xml = try XMLStreamWriter(indent: plainExport, sink: sink)
        let references = referenceNumbers
        xml.start("KeePassFile")
        try writeMeta(xml)
        xml.start("Root")
        if !plainExport, let versionsPerPiece, let pieces = DocumentPieces(root: vault.root, versionsPerPiece: versionsPerPiece) {
            try writeInPieces(pieces, xml, references)
        } else {
            try writeGroup(vault.root, xml, references, nil)
        }
        xml.start("DeletedObjects")
        for deleted in vault.deletedObjects {
            xml.start("DeletedObject")
            xml.element("UUID", uuid(deleted.uuid))
            xml.element("DeletionTime", time(deleted.deletedAt))
            xml.end()
        }
        xml.end()
        vault.preservedRootElements.forEach { writePreserved($0, xml) }
        xml.end()
        vault.preservedFileElements.filter { $0.name != "Meta" }.forEach { writePreserved($0, xml) }
        xml.end()
        try xml.finish()
    }

    // MARK: Values

    private var isKDBX4: Bool { version.isKDBX4 }

    private func time(_ value: Timestamp) -> String {
        guard isKDBX4 && !plainExport else { return value.iso8601 }
        var seconds = UInt64(bitPattern: value.secondsSinceYearOne).littleEndian
        return withUnsafeBytes(of: &seconds) { Base64.encode($0) }
    }

    private func uuid(_ value: UUID?) -> String {
        var raw = (value ?? ElementTable.zeroUUID).uuid
        return withUnsafeBytes(of: &raw) { Base64.encode($0) }
    }

    private func bool(_ value: Bool) -> String { value ? "True" : "False" }

    private func optionalBool(_ value: Bool?) -> String { value.map(bool) ?? "null" }

    /// Masks `bytes` in place with the inner stream and returns base64.
    private func protect(inPlace bytes: inout [UInt8]) throws(KDBXError) -> String {
        if let innerStream {
            let result: Result<Void, CryptoError> = bytes.withUnsafeMutableBytes { buffer in
                Result { () throws(CryptoError) in try innerStream.apply(to: buffer) }
            }
            if case .failure(let error) = result { throw .crypto(error) }
        }
        return bytes.withUnsafeBytes { Base64.encode($0) }
    }

    // MARK: Elements

    private func writeMeta(_ xml: XMLStreamWriter) throws(KDBXError) {
        let meta = vault.meta
        xml.start("Meta")
        xml.element("Generator", meta.generator)
        if let headerHash { xml.element("HeaderHash", headerHash.base64EncodedString()) }
        // KeePass writes it from KDBX 4 on; every reader takes it in any version (KeePass skips what it
        // does not know), so 3.1 keeps it too rather than losing it.
        if let changed = meta.settingsChanged { xml.element("SettingsChanged", time(changed)) }
        xml.element("DatabaseName", meta.databaseName)
        if let changed = meta.databaseNameChanged { xml.element("DatabaseNameChanged", time(changed)) }
        xml.element("DatabaseDescription", meta.databaseDescription)
        if let changed = meta.databaseDescriptionChanged { xml.element("DatabaseDescriptionChanged", time(changed)) }
        xml.element("DefaultUserName", meta.defaultUserName)
        if let changed = meta.defaultUserNameChanged { xml.element("DefaultUserNameChanged", time(changed)) }
        xml.element("MaintenanceHistoryDays", String(meta.maintenanceHistoryDays))
        xml.element("Color", meta.color)
        if let changed = meta.masterKeyChanged { xml.element("MasterKeyChanged", time(changed)) }
        xml.element("MasterKeyChangeRec", String(meta.masterKeyChangeRecommended))
        xml.element("MasterKeyChangeForce", String(meta.masterKeyChangeForced))
        if let once = meta.masterKeyChangeForceOnce { xml.element("MasterKeyChangeForceOnce", bool(once)) }
        xml.start("MemoryProtection")
        xml.element("ProtectTitle", bool(meta.memoryProtection.protectTitle))
        xml.element("ProtectUserName", bool(meta.memoryProtection.protectUserName))
        xml.element("ProtectPassword", bool(meta.memoryProtection.protectPassword))
        xml.element("ProtectURL", bool(meta.memoryProtection.protectURL))
        xml.element("ProtectNotes", bool(meta.memoryProtection.protectNotes))
        xml.end()
        if !meta.customIcons.isEmpty {
            xml.start("CustomIcons")
            for icon in meta.customIcons {
                xml.start("Icon")
                xml.element("UUID", uuid(icon.uuid))
                xml.element("Data", icon.data.base64EncodedString())
                if version >= .v4_1 {
                    if let name = icon.name { xml.element("Name", name) }
                    if let changed = icon.lastModified { xml.element("LastModificationTime", time(changed)) }
                }
                xml.end()
            }
            xml.end()
        }
        xml.element("RecycleBinEnabled", bool(meta.recycleBinEnabled))
        xml.element("RecycleBinUUID", uuid(meta.recycleBinUUID))
        if let changed = meta.recycleBinChanged { xml.element("RecycleBinChanged", time(changed)) }
        xml.element("EntryTemplatesGroup", uuid(meta.entryTemplatesGroup))
        if let changed = meta.entryTemplatesGroupChanged { xml.element("EntryTemplatesGroupChanged", time(changed)) }
        xml.element("HistoryMaxItems", String(meta.historyMaxItems))
        xml.element("HistoryMaxSize", String(meta.historyMaxSize))
        xml.element("LastSelectedGroup", uuid(meta.lastSelectedGroup))
        xml.element("LastTopVisibleGroup", uuid(meta.lastTopVisibleGroup))
        if (!isKDBX4 || plainExport) && !binaryOrder.isEmpty {
            xml.start("Binaries")
            for (index, id) in binaryOrder.enumerated() {
                guard let binary = vault.binaries[id] else { throw .unwritable("attachment content \(id) is missing") }
                xml.start("Binary")
                xml.attribute("ID", String(index))
                // Never `Protected="True"`: see `KDBXVersion.keepsAttachmentProtection`.
                if compressMetaBinaries {
                    xml.attribute("Compressed", "True")
                    xml.text(try Gzip.compress(binary.data).base64EncodedString())
                } else {
                    xml.text(binary.data.base64EncodedString())
                }
                xml.end()
            }
            xml.end()
        }
        writeCustomData(meta.customData, xml)
        meta.preserved.forEach { writePreserved($0, xml) }
        xml.end()
    }

    private func writeCustomData(_ items: [CustomDataItem], _ xml: XMLStreamWriter) {
        guard !items.isEmpty else { return }
        xml.start("CustomData")
        for item in items {
            xml.start("Item")
            xml.element("Key", item.key)
            xml.element("Value", item.value)
            if version >= .v4_1, let changed = item.lastModified { xml.element("LastModificationTime", time(changed)) }
            xml.end()
        }
        xml.end()
    }

    private func writeTimes(_ times: Times, _ xml: XMLStreamWriter) {
        xml.start("Times")
        xml.element("CreationTime", time(times.created))
        xml.element("LastModificationTime", time(times.lastModified))
        xml.element("LastAccessTime", time(times.lastAccessed))
        xml.element("ExpiryTime", time(times.expiryTime))
        xml.element("Expires", bool(times.expires))
        xml.element("UsageCount", String(times.usageCount))
        xml.element("LocationChanged", time(times.locationChanged))
        xml.end()
    }

    /// The root's tree with every other piece of its entries written by a helper thread.
    private func writeInPieces(_ pieces: DocumentPieces, _ xml: XMLStreamWriter, _ references: [BinaryID: Int]) throws(KDBXError) {
        let streamStart = innerStream?.position ?? 0
        let helperStream: StreamCipher?
        do throws(CryptoError) { helperStream = try innerStream?.copy(at: streamStart) } catch { throw .crypto(error) }
        var helperWriter = self
        helperWriter.innerStream = helperStream
        helperWriter.versionsPerPiece = nil
        let helper = FragmentWriter(pieces.helpers, writer: helperWriter, stream: helperStream, streamStart: streamStart,
                                    references: references)
        defer { helper.stop() }
        try writeGroup(vault.root, xml, references, PieceWriting(pieces: pieces, helper: helper, streamStart: streamStart))
    }

    /// Where a save writing in pieces is: the plan, the helper and the next group's number.
    private final class PieceWriting {
        let pieces: DocumentPieces
        let helper: FragmentWriter
        let streamStart: UInt64
        var nextGroup = 0

        init(pieces: DocumentPieces, helper: FragmentWriter, streamStart: UInt64) {
            self.pieces = pieces
            self.helper = helper
            self.streamStart = streamStart
        }
    }

    /// The helper's `piece`, put in its place; this writer's stream moves past the bytes it took.
    private func insert(_ piece: DocumentPieces.Piece, _ xml: XMLStreamWriter, _ writing: PieceWriting) throws(KDBXError) {
        let fragment = try writing.helper.next()
        if let innerStream {
            let start = writing.streamStart + piece.streamOffset
            guard innerStream.position == start else { throw .unwritable("XML writer: the inner stream is out of step") }
            do throws(CryptoError) { try innerStream.reposition(to: writing.streamStart + piece.streamEnd) } catch { throw .crypto(error) }
        }
        fragment.withUnsafeBytes { xml.insertFragment($0) }
    }

    private func writeGroup(_ group: Group, _ xml: XMLStreamWriter, _ references: [BinaryID: Int], _ writing: PieceWriting?) throws(KDBXError) {
        xml.start("Group")
        xml.element("UUID", uuid(group.uuid))
        xml.element("Name", group.name)
        xml.element("Notes", group.notes)
        xml.element("IconID", String(group.iconID))
        if let icon = group.customIconUUID { xml.element("CustomIconUUID", uuid(icon)) }
        writeTimes(group.times, xml)
        xml.element("IsExpanded", bool(group.isExpanded))
        xml.element("DefaultAutoTypeSequence", group.defaultAutoTypeSequence)
        xml.element("EnableAutoType", optionalBool(group.enableAutoType))
        xml.element("EnableSearching", optionalBool(group.enableSearching))
        xml.element("LastTopVisibleEntry", uuid(group.lastTopVisibleEntry))
        if version >= .v4_1 {
            if let previous = group.previousParentGroup { xml.element("PreviousParentGroup", uuid(previous)) }
            if !group.tags.isEmpty { xml.element("Tags", group.tags.joined(separator: ";")) }
        }
        writeCustomData(group.customData, xml)
        group.preserved.forEach { writePreserved($0, xml) }
        if let writing {
            let ordinal = writing.nextGroup
            writing.nextGroup += 1
            for piece in writing.pieces.groups[ordinal] {
                if piece.isHelpers {
                    try insert(piece, xml, writing)
                } else {
                    for entry in piece.entries { try writeEntry(entry, xml, references, isHistoryItem: false) }
                }
            }
        } else {
            for entry in group.entries { try writeEntry(entry, xml, references, isHistoryItem: false) }
        }
        for child in group.groups { try writeGroup(child, xml, references, writing) }
        xml.end()
    }

    /// An entry with its history (a helper's piece calls it too).
    func writeEntry(
        _ entry: Entry, _ xml: XMLStreamWriter, _ references: [BinaryID: Int], isHistoryItem: Bool
    ) throws(KDBXError) {
        xml.start("Entry")
        xml.element("UUID", uuid(entry.uuid))
        xml.element("IconID", String(entry.iconID))
        if let icon = entry.customIconUUID { xml.element("CustomIconUUID", uuid(icon)) }
        xml.element("ForegroundColor", entry.foregroundColor)
        xml.element("BackgroundColor", entry.backgroundColor)
        xml.element("OverrideURL", entry.overrideURL)
        if version >= .v4_1, let check = entry.qualityCheck { xml.element("QualityCheck", bool(check)) }
        xml.element("Tags", entry.tags.joined(separator: ";"))
        if version >= .v4_1, let previous = entry.previousParentGroup { xml.element("PreviousParentGroup", uuid(previous)) }
        writeTimes(entry.times, xml)
        for field in entry.fields {
            xml.start("String")
            xml.element("Key", field.key)
            xml.start("Value")
            switch field.value {
            case .plain(let text):
                xml.text(text)
            case .protected(let value) where plainExport:
                xml.attribute("ProtectInMemory", "True")
                xml.text(value.reveal())
            case .protected(let value):
                xml.attribute("Protected", "True")
                xml.text(try value.withRevealedBytes { (bytes: inout [UInt8]) throws(KDBXError) in try protect(inPlace: &bytes) })
            }
            xml.end()
            xml.end()
        }
        for attachment in entry.attachments {
            guard let reference = references[attachment.binary] else {
                throw .unwritable("attachment '\(attachment.name)' refers to missing content")
            }
            xml.start("Binary")
            xml.element("Key", attachment.name)
            xml.start("Value")
            xml.attribute("Ref", String(reference))
            xml.end()
            xml.end()
        }
        writeAutoType(entry.autoType, xml)
        writeCustomData(entry.customData, xml)
        entry.preserved.forEach { writePreserved($0, xml) }
        if !isHistoryItem {
            xml.start("History")
            for item in entry.history { try writeEntry(item, xml, references, isHistoryItem: true) }
            xml.end()
        }
        xml.end()
    }

    private func writeAutoType(_ autoType: AutoType, _ xml: XMLStreamWriter) {
        xml.start("AutoType")
        xml.element("Enabled", bool(autoType.isEnabled))
        xml.element("DataTransferObfuscation", String(autoType.dataTransferObfuscation))
        if !autoType.defaultSequence.isEmpty { xml.element("DefaultSequence", autoType.defaultSequence) }
        for association in autoType.associations {
            xml.start("Association")
            xml.element("Window", association.window)
            xml.element("KeystrokeSequence", association.keystrokeSequence)
            xml.end()
        }
        autoType.preserved.forEach { writePreserved($0, xml) }
        xml.end()
    }

    private func writePreserved(_ element: PreservedXML, _ xml: XMLStreamWriter) {
        xml.start(named: element.name)
        for attribute in element.attributes { xml.attribute(named: attribute.name, attribute.value) }
        xml.text(element.text)
        element.children.forEach { writePreserved($0, xml) }
        xml.end()
    }
}

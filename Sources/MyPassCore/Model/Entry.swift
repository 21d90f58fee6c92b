public import Foundation

/// A KeePass entry: its fields, attachments, times, history and everything else KeePass stores.
/// A value: editing returns a new entry (see the edit operations on `Vault`).
public struct Entry: Sendable, Hashable, Identifiable {
    /// The entry's identity across versions and devices.
    public var uuid: UUID
    /// A standard KeePass icon.
    public var iconID: Int
    /// The entry's tags.
    public var tags: [String]
    /// Creation, modification, access and expiry times.
    public var times: Times
    /// String fields in document order (standard and custom).
    public var fields: [EntryField]
    /// Attachments by name, their bytes in the vault's binary pool.
    public var attachments: [Attachment]
    /// Earlier versions, oldest first. History items have no history of their own.
    public var history: [Entry]
    /// The properties most entries leave at their defaults, kept behind one reference so that an
    /// entry (and each of its history items) stays small; every entry with all defaults shares one.
    private var details: EntryDetails.Shared

    /// One of the vault's own icons, if set.
    public var customIconUUID: UUID? {
        get { details.value.customIconUUID }
        set { details = details.updating(\.customIconUUID, to: newValue) }
    }
    /// Text colour (`#RRGGBB`, or empty).
    public var foregroundColor: String {
        get { details.value.foregroundColor }
        set { details = details.updating(\.foregroundColor, to: newValue) }
    }
    /// Background colour (`#RRGGBB`, or empty).
    public var backgroundColor: String {
        get { details.value.backgroundColor }
        set { details = details.updating(\.backgroundColor, to: newValue) }
    }
    /// A command that replaces opening the URL.
    public var overrideURL: String {
        get { details.value.overrideURL }
        set { details = details.updating(\.overrideURL, to: newValue) }
    }
    /// Whether the password takes part in quality reports (KDBX 4.1).
    public var qualityCheck: Bool? {
        get { details.value.qualityCheck }
        set { details = details.updating(\.qualityCheck, to: newValue) }
    }
    /// Auto-type settings.
    public var autoType: AutoType {
        get { details.value.autoType }
        set { details = details.updating(\.autoType, to: newValue) }
    }
    /// Plugin and application data of the entry.
    public var customData: [CustomDataItem] {
        get { details.value.customData }
        set { details = details.updating(\.customData, to: newValue) }
    }
    /// KDBX 4.1: the group the entry was in before its last move.
    public var previousParentGroup: UUID? {
        get { details.value.previousParentGroup }
        set { details = details.updating(\.previousParentGroup, to: newValue) }
    }
    /// Unknown child elements of `<Entry>`, kept.
    public var preserved: [PreservedXML] {
        get { details.value.preserved }
        set { details = details.updating(\.preserved, to: newValue) }
    }

    /// The entry's identity (`Identifiable`).
    public var id: UUID { uuid }

    /// An entry with these values.
    public init(
        uuid: UUID, iconID: Int = 0, customIconUUID: UUID? = nil, foregroundColor: String = "",
        backgroundColor: String = "", overrideURL: String = "", qualityCheck: Bool? = nil, tags: [String] = [],
        times: Times, fields: [EntryField] = [], attachments: [Attachment] = [], autoType: AutoType = AutoType(),
        customData: [CustomDataItem] = [], previousParentGroup: UUID? = nil, history: [Entry] = [],
        preserved: [PreservedXML] = []
    ) {
        self.uuid = uuid
        self.iconID = iconID
        self.tags = tags
        self.times = times
        self.fields = fields
        self.attachments = attachments
        self.history = history
        self.details = .holding(EntryDetails(
            customIconUUID: customIconUUID, foregroundColor: foregroundColor, backgroundColor: backgroundColor,
            overrideURL: overrideURL, qualityCheck: qualityCheck, autoType: autoType, customData: customData,
            previousParentGroup: previousParentGroup, preserved: preserved))
    }

    /// Makes this entry's rarely set properties use `earlier`'s storage when they are equal.
    mutating func shareDetails(with earlier: Entry) {
        if details == earlier.details { details = earlier.details }
    }

    /// The value of field `key`, if present.
    public func field(_ key: String) -> FieldValue? {
        fields.first { $0.key == key }?.value
    }

    /// The value of field `key` as KeePass means it: a standard field (Title, UserName, Password,
    /// URL, Notes) that is empty is the same as one that is absent (pykeepass leaves them out,
    /// KeePassXC writes them empty), so merges and diffs compare this, not `field`.
    public func effectiveField(_ key: String) -> FieldValue? {
        guard let value = field(key) else { return nil }
        return EntryField.isStandard(key) && value.utf8Count == 0 ? nil : value
    }

    /// The text of field `key`, or "" when absent (protected values revealed).
    public func text(_ key: String) -> String {
        field(key)?.text ?? ""
    }

    /// Sets field `key`, keeping its position; a new field goes last. `nil` removes it.
    public mutating func setField(_ key: String, _ value: FieldValue?) {
        if let index = fields.firstIndex(where: { $0.key == key }) {
            if let value { fields[index].value = value } else { fields.remove(at: index) }
        } else if let value {
            fields.append(EntryField(key: key, value: value))
        }
    }

    /// The title field's text.
    public var title: String { text(EntryField.title) }
    /// The user name field's text.
    public var userName: String { text(EntryField.userName) }
    /// The URL field's text.
    public var url: String { text(EntryField.url) }
    /// The notes field's text.
    public var notes: String { text(EntryField.notes) }

    /// The custom (non-standard) fields.
    public var customFields: [EntryField] { fields.filter { !EntryField.isStandard($0.key) } }

    /// This entry as a history item: the same content without history.
    public var withoutHistory: Entry {
        var copy = self
        copy.history = []
        return copy
    }

    /// Adds the attachment contents this entry and its history items refer to.
    public func collectBinaryReferences(into used: inout Set<BinaryID>) {
        for attachment in attachments { used.insert(attachment.binary) }
        for item in history {
            for attachment in item.attachments { used.insert(attachment.binary) }
        }
    }

    /// Approximate size KeePass counts against HistoryMaxSize: field lengths, attachment names and
    /// sizes are added by the vault (which knows the binary sizes).
    func approximateSize(binarySize: (BinaryID) -> Int) -> Int {
        var size = 0
        for field in fields { size += field.key.utf8.count + field.value.utf8Count }
        for attachment in attachments { size += attachment.name.utf8.count + binarySize(attachment.binary) }
        for tag in tags { size += tag.utf8.count }
        for item in customData { size += item.key.utf8.count + item.value.utf8.count }
        size += autoType.defaultSequence.utf8.count
        for association in autoType.associations {
            size += association.window.utf8.count + association.keystrokeSequence.utf8.count
        }
        return size + foregroundColor.utf8.count + backgroundColor.utf8.count + overrideURL.utf8.count
    }
}

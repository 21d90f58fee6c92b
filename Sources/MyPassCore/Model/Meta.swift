public import Foundation

/// The vault-wide settings (`<Meta>`), with KeePass's `*Changed` times.
public struct Meta: Sendable, Hashable {
    public var generator: String
    public var databaseName: String
    public var databaseNameChanged: Timestamp?
    public var databaseDescription: String
    public var databaseDescriptionChanged: Timestamp?
    public var defaultUserName: String
    public var defaultUserNameChanged: Timestamp?
    public var maintenanceHistoryDays: Int
    public var color: String
    public var masterKeyChanged: Timestamp?
    public var masterKeyChangeRecommended: Int64
    public var masterKeyChangeForced: Int64
    public var masterKeyChangeForceOnce: Bool?
    public var memoryProtection: MemoryProtection
    public var customIcons: [CustomIcon]
    public var recycleBinEnabled: Bool
    public var recycleBinUUID: UUID?
    public var recycleBinChanged: Timestamp?
    public var entryTemplatesGroup: UUID?
    public var entryTemplatesGroupChanged: Timestamp?
    /// Maximum history items per entry; -1 means unlimited.
    public var historyMaxItems: Int
    /// Maximum history size per entry in bytes; -1 means unlimited.
    public var historyMaxSize: Int64
    public var lastSelectedGroup: UUID?
    public var lastTopVisibleGroup: UUID?
    public var settingsChanged: Timestamp?
    public var customData: [CustomDataItem]
    /// Unknown child elements of `<Meta>`, kept.
    public var preserved: [PreservedXML]

    /// Which standard fields KeePass protects by default.
    public struct MemoryProtection: Sendable, Hashable {
        public var protectTitle = false
        public var protectUserName = false
        public var protectPassword = true
        public var protectURL = false
        public var protectNotes = false

        public init(
            protectTitle: Bool = false, protectUserName: Bool = false, protectPassword: Bool = true,
            protectURL: Bool = false, protectNotes: Bool = false
        ) {
            self.protectTitle = protectTitle
            self.protectUserName = protectUserName
            self.protectPassword = protectPassword
            self.protectURL = protectURL
            self.protectNotes = protectNotes
        }

        /// Whether standard field `key` is protected by default.
        public func protects(_ key: String) -> Bool {
            switch key {
            case "Title": protectTitle
            case "UserName": protectUserName
            case "Password": protectPassword
            case "URL": protectURL
            case "Notes": protectNotes
            default: false
            }
        }
    }

    /// KeePass's defaults for a new vault.
    public init(generator: String = "MyPass") {
        self.generator = generator
        databaseName = ""
        databaseDescription = ""
        defaultUserName = ""
        maintenanceHistoryDays = 365
        color = ""
        masterKeyChangeRecommended = -1
        masterKeyChangeForced = -1
        memoryProtection = MemoryProtection()
        customIcons = []
        recycleBinEnabled = true
        historyMaxItems = 10
        historyMaxSize = 6 * 1024 * 1024
        customData = []
        preserved = []
    }
}

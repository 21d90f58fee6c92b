public import Foundation

/// The vault-wide settings (`<Meta>`), with KeePass's `*Changed` times.
public struct Meta: Sendable, Hashable {
    /// The program that wrote the file (`KeePassXC`, `mypass-sync`).
    public var generator: String
    /// The vault's name.
    public var databaseName: String
    /// When the name last changed (decides a merge of it).
    public var databaseNameChanged: Timestamp?
    /// The vault's description.
    public var databaseDescription: String
    /// When the description last changed.
    public var databaseDescriptionChanged: Timestamp?
    /// The user name new entries start with.
    public var defaultUserName: String
    /// When the default user name last changed.
    public var defaultUserNameChanged: Timestamp?
    /// Days after which KeePass's maintenance deletes history.
    public var maintenanceHistoryDays: Int
    /// The vault's colour (`#RRGGBB`, or empty).
    public var color: String
    /// When the master key last changed (decides which key a merge keeps).
    public var masterKeyChanged: Timestamp?
    /// Days after which a key change is recommended (-1: never).
    public var masterKeyChangeRecommended: Int64
    /// Days after which a key change is forced (-1: never).
    public var masterKeyChangeForced: Int64
    /// Whether the next open must change the key.
    public var masterKeyChangeForceOnce: Bool?
    /// Which standard fields are protected.
    public var memoryProtection: MemoryProtection
    /// The vault's own icons.
    public var customIcons: [CustomIcon]
    /// Whether deletions go to the recycle bin.
    public var recycleBinEnabled: Bool
    /// The recycle bin group.
    public var recycleBinUUID: UUID?
    /// When the recycle bin setting last changed.
    public var recycleBinChanged: Timestamp?
    /// The group of entry templates.
    public var entryTemplatesGroup: UUID?
    /// When the templates group last changed.
    public var entryTemplatesGroupChanged: Timestamp?
    /// Maximum history items per entry; -1 means unlimited.
    public var historyMaxItems: Int
    /// Maximum history size per entry in bytes; -1 means unlimited.
    public var historyMaxSize: Int64
    /// The group a KeePass UI last showed.
    public var lastSelectedGroup: UUID?
    /// The group at the top of a KeePass UI's tree.
    public var lastTopVisibleGroup: UUID?
    /// When any setting last changed (KDBX 4).
    public var settingsChanged: Timestamp?
    /// Plugin and application data of the vault.
    public var customData: [CustomDataItem]
    /// Unknown child elements of `<Meta>`, kept.
    public var preserved: [PreservedXML]

    /// Which standard fields KeePass protects by default.
    public struct MemoryProtection: Sendable, Hashable {
        /// Titles are protected.
        public var protectTitle = false
        /// User names are protected.
        public var protectUserName = false
        /// Passwords are protected.
        public var protectPassword = true
        /// URLs are protected.
        public var protectURL = false
        /// Notes are protected.
        public var protectNotes = false

        /// Settings with these values.
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
            case EntryField.title: protectTitle
            case EntryField.userName: protectUserName
            case EntryField.password: protectPassword
            case EntryField.url: protectURL
            case EntryField.notes: protectNotes
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

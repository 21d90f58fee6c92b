public import Foundation

/// Plugin and client data stored as key/value items (`<CustomData><Item>`), on the vault, groups
/// and entries.
public struct CustomDataItem: Sendable, Hashable {
    /// The item's key.
    public var key: String
    /// The item's value.
    public var value: String
    /// KDBX 4.1: when the item last changed.
    public var lastModified: Timestamp?

    /// An item with these values.
    public init(key: String, value: String, lastModified: Timestamp? = nil) {
        self.key = key
        self.value = value
        self.lastModified = lastModified
    }

    /// The key of KeePassXC's bookkeeping item: when the custom data last changed (not content).
    public static let bookkeepingKey = "_LAST_MODIFIED"

    /// Whether this item is bookkeeping rather than content: alone it changes nothing in a merge.
    public var isBookkeeping: Bool { key == Self.bookkeepingKey }
}

extension Array where Element == CustomDataItem {
    /// The items that are content (KeePassXC's `_LAST_MODIFIED` left out).
    public var content: [CustomDataItem] {
        contains(where: \.isBookkeeping) ? filter { !$0.isBookkeeping } : self
    }
}

/// A custom icon of the vault (`<Meta><CustomIcons><Icon>`).
public struct CustomIcon: Sendable, Hashable {
    /// The icon's identity.
    public var uuid: UUID
    /// The icon's PNG bytes.
    public var data: Data
    /// KDBX 4.1: the icon's name.
    public var name: String?
    /// KDBX 4.1: when the icon last changed.
    public var lastModified: Timestamp?

    /// An icon with these values.
    public init(uuid: UUID, data: Data, name: String? = nil, lastModified: Timestamp? = nil) {
        self.uuid = uuid
        self.data = data
        self.name = name
        self.lastModified = lastModified
    }
}

/// An object removed permanently (a tombstone in `<DeletedObjects>`), so that merges do not bring
/// it back.
public struct DeletedObject: Sendable, Hashable {
    /// The deleted object's identity.
    public var uuid: UUID
    /// When it was deleted.
    public var deletedAt: Timestamp

    /// A tombstone for `uuid`.
    public init(uuid: UUID, deletedAt: Timestamp) {
        self.uuid = uuid
        self.deletedAt = deletedAt
    }
}

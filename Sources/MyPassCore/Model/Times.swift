/// The timestamps KeePass keeps on every entry and group.
public struct Times: Sendable, Hashable {
    /// When the object was created.
    public var created: Timestamp
    /// When it was last modified (decides newer-wins in a merge).
    public var lastModified: Timestamp
    /// When it was last used.
    public var lastAccessed: Timestamp
    /// When it expires (if `expires`).
    public var expiryTime: Timestamp
    /// Whether it expires.
    public var expires: Bool
    /// How often it was used.
    public var usageCount: Int64
    /// When the object last moved to another group (KeePass's LocationChanged).
    public var locationChanged: Timestamp

    /// Times with these values.
    public init(
        created: Timestamp, lastModified: Timestamp, lastAccessed: Timestamp, expiryTime: Timestamp,
        expires: Bool = false, usageCount: Int64 = 0, locationChanged: Timestamp
    ) {
        self.created = created
        self.lastModified = lastModified
        self.lastAccessed = lastAccessed
        self.expiryTime = expiryTime
        self.expires = expires
        self.usageCount = usageCount
        self.locationChanged = locationChanged
    }

    /// All times set to `time`, not expiring: a new object's times.
    public init(allAt time: Timestamp) {
        self.init(created: time, lastModified: time, lastAccessed: time, expiryTime: time, locationChanged: time)
    }
}

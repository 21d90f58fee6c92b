public import Foundation

/// A KeePass group: its own settings and times, subgroups and entries.
public struct Group: Sendable, Hashable, Identifiable {
    /// The group's identity across versions and devices.
    public var uuid: UUID
    /// The group's name.
    public var name: String
    /// The group's notes.
    public var notes: String
    /// A standard KeePass icon.
    public var iconID: Int
    /// One of the vault's own icons, if set.
    public var customIconUUID: UUID?
    /// Creation, modification, access, expiry and location-change times.
    public var times: Times
    /// Whether a KeePass UI shows it expanded.
    public var isExpanded: Bool
    /// The auto-type sequence its entries inherit.
    public var defaultAutoTypeSequence: String
    /// nil means "inherit from the parent" (KeePass's `null`).
    public var enableAutoType: Bool?
    /// nil means "inherit from the parent".
    public var enableSearching: Bool?
    /// The entry at the top of a KeePass UI's list.
    public var lastTopVisibleEntry: UUID?
    /// KDBX 4.1: the group this one was in before its last move.
    public var previousParentGroup: UUID?
    /// KDBX 4.1: group tags.
    public var tags: [String]
    /// Plugin and application data of the group.
    public var customData: [CustomDataItem]
    /// Its subgroups, in order.
    public var groups: [Group]
    /// Its entries, in order.
    public var entries: [Entry]
    /// Unknown child elements of `<Group>`, kept.
    public var preserved: [PreservedXML]

    /// The group's identity (`Identifiable`).
    public var id: UUID { uuid }

    /// A group with these values.
    public init(
        uuid: UUID, name: String, notes: String = "", iconID: Int = 48, customIconUUID: UUID? = nil, times: Times,
        isExpanded: Bool = true, defaultAutoTypeSequence: String = "", enableAutoType: Bool? = nil,
        enableSearching: Bool? = nil, lastTopVisibleEntry: UUID? = nil, previousParentGroup: UUID? = nil,
        tags: [String] = [], customData: [CustomDataItem] = [], groups: [Group] = [], entries: [Entry] = [],
        preserved: [PreservedXML] = []
    ) {
        self.uuid = uuid
        self.name = name
        self.notes = notes
        self.iconID = iconID
        self.customIconUUID = customIconUUID
        self.times = times
        self.isExpanded = isExpanded
        self.defaultAutoTypeSequence = defaultAutoTypeSequence
        self.enableAutoType = enableAutoType
        self.enableSearching = enableSearching
        self.lastTopVisibleEntry = lastTopVisibleEntry
        self.previousParentGroup = previousParentGroup
        self.tags = tags
        self.customData = customData
        self.groups = groups
        self.entries = entries
        self.preserved = preserved
    }

    /// Calls `visit` for this group and every group below it, depth first, with each group's path of
    /// names from (and excluding) this group.
    public func forEachGroup(path: [String] = [], _ visit: (Group, [String]) throws -> Void) rethrows {
        try visit(self, path)
        for child in groups {
            try child.forEachGroup(path: path + [child.name], visit)
        }
    }

    /// Every entry in this group and below, with the path of group names leading to it.
    public func allEntries() -> [(entry: Entry, groupPath: [String])] {
        var result: [(Entry, [String])] = []
        forEachGroup { group, path in
            for entry in group.entries { result.append((entry, path)) }
        }
        return result
    }

    /// The attachment contents referred to by the entries (and their history) in this group and below.
    public func referencedBinaries() -> Set<BinaryID> {
        var used = Set<BinaryID>()
        forEachGroup { group, _ in
            for entry in group.entries { entry.collectBinaryReferences(into: &used) }
        }
        return used
    }
}

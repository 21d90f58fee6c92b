public import Foundation

/// A KeePass group: its own settings and times, subgroups and entries.
public struct Group: Sendable, Hashable, Identifiable {
    public var uuid: UUID
    public var name: String
    public var notes: String
    public var iconID: Int
    public var customIconUUID: UUID?
    public var times: Times
    public var isExpanded: Bool
    public var defaultAutoTypeSequence: String
    /// nil means "inherit from the parent" (KeePass's `null`).
    public var enableAutoType: Bool?
    /// nil means "inherit from the parent".
    public var enableSearching: Bool?
    public var lastTopVisibleEntry: UUID?
    /// KDBX 4.1: the group this one was in before its last move.
    public var previousParentGroup: UUID?
    /// KDBX 4.1: group tags.
    public var tags: [String]
    public var customData: [CustomDataItem]
    public var groups: [Group]
    public var entries: [Entry]
    /// Unknown child elements of `<Group>`, kept.
    public var preserved: [PreservedXML]

    public var id: UUID { uuid }

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

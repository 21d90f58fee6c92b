internal import MyPassCore

/// One property of an entry as an undo reverts it: whether two versions differ in it, and how to copy
/// it from one version into another. The same properties a merge decides one by one.
struct EntryProperty {
    let name: String
    let differs: (Entry, Entry) -> Bool
    /// Copies the property of the second entry into the first.
    let copy: (inout Entry, Entry) -> Void

    private init<T: Equatable>(_ name: String, _ value: @escaping (Entry) -> T, copy: @escaping (inout Entry, Entry) -> Void) {
        self.name = name
        self.differs = { value($0) != value($1) }
        self.copy = copy
    }

    /// The properties of `versions` (string fields, attachments and custom data by name: the union).
    static func all(of versions: [Entry]) -> [EntryProperty] {
        var list: [EntryProperty] = []
        for key in orderedUnion(versions.flatMap { $0.fields.map(\.key) }, [], []) {
            list.append(EntryProperty(key, { $0.effectiveField(key) }) { $0.setField(key, $1.field(key)) })
        }
        list.append(EntryProperty("Tags", { Set($0.tags) }) { $0.tags = $1.tags })
        for name in orderedUnion(versions.flatMap { $0.attachments.map(\.name) }, [], []) {
            list.append(EntryProperty("Attachment '\(name)'", { entry in entry.attachments.first { $0.name == name }?.binary }) { target, source in
                target.attachments.removeAll { $0.name == name }
                if let attachment = source.attachments.first(where: { $0.name == name }) { target.attachments.append(attachment) }
            })
        }
        for key in orderedUnion(versions.flatMap { $0.customData.map(\.key) }, [], []) {
            list.append(EntryProperty("CustomData '\(key)'", { entry in entry.customData.first { $0.key == key } }) { target, source in
                target.customData.removeAll { $0.key == key }
                if let item = source.customData.first(where: { $0.key == key }) { target.customData.append(item) }
            })
        }
        list += [
            EntryProperty("Icon", { $0.iconID }) { $0.iconID = $1.iconID },
            EntryProperty("CustomIcon", { $0.customIconUUID }) { $0.customIconUUID = $1.customIconUUID },
            EntryProperty("ForegroundColor", { $0.foregroundColor }) { $0.foregroundColor = $1.foregroundColor },
            EntryProperty("BackgroundColor", { $0.backgroundColor }) { $0.backgroundColor = $1.backgroundColor },
            EntryProperty("OverrideURL", { $0.overrideURL }) { $0.overrideURL = $1.overrideURL },
            EntryProperty("QualityCheck", { $0.qualityCheck }) { $0.qualityCheck = $1.qualityCheck },
            EntryProperty("AutoType", { $0.autoType }) { $0.autoType = $1.autoType },
            EntryProperty("Expiry", { [$0.times.expires ? 1 : 0, $0.times.expiryTime.secondsSinceYearOne] }) {
                $0.times.expires = $1.times.expires
                $0.times.expiryTime = $1.times.expiryTime
            },
            EntryProperty("Unknown data", { $0.preserved }) { $0.preserved = $1.preserved },
        ]
        return list
    }
}

/// The same for a group's own properties.
struct GroupProperty {
    let name: String
    let differs: (Group, Group) -> Bool
    let copy: (inout Group, Group) -> Void

    private init<T: Equatable>(_ name: String, _ value: @escaping (Group) -> T, copy: @escaping (inout Group, Group) -> Void) {
        self.name = name
        self.differs = { value($0) != value($1) }
        self.copy = copy
    }

    static var all: [GroupProperty] { [
        GroupProperty("Name", { $0.name }) { $0.name = $1.name },
        GroupProperty("Notes", { $0.notes }) { $0.notes = $1.notes },
        GroupProperty("Icon", { $0.iconID }) { $0.iconID = $1.iconID },
        GroupProperty("CustomIcon", { $0.customIconUUID }) { $0.customIconUUID = $1.customIconUUID },
        GroupProperty("DefaultAutoTypeSequence", { $0.defaultAutoTypeSequence }) { $0.defaultAutoTypeSequence = $1.defaultAutoTypeSequence },
        GroupProperty("EnableAutoType", { $0.enableAutoType }) { $0.enableAutoType = $1.enableAutoType },
        GroupProperty("EnableSearching", { $0.enableSearching }) { $0.enableSearching = $1.enableSearching },
        GroupProperty("Tags", { Set($0.tags) }) { $0.tags = $1.tags },
        GroupProperty("CustomData", { $0.customData }) { $0.customData = $1.customData },
        GroupProperty("Expiry", { [$0.times.expires ? 1 : 0, $0.times.expiryTime.secondsSinceYearOne] }) {
            $0.times.expires = $1.times.expires
            $0.times.expiryTime = $1.times.expiryTime
        },
    ] }
}

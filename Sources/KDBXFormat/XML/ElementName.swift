/// The element names of the KeePass document this reader interprets, as small integers; any other
/// name gets an identifier above `ElementName.known` when first seen.
struct ElementName: Hashable, Sendable {
    let id: Int32

    static let knownNames: [String] = [
        "KeePassFile", "Meta", "Root", "Group", "Entry", "History", "UUID", "Name", "Notes", "IconID",
        "CustomIconUUID", "Times", "CreationTime", "LastModificationTime", "LastAccessTime", "ExpiryTime",
        "Expires", "UsageCount", "LocationChanged", "IsExpanded", "DefaultAutoTypeSequence", "EnableAutoType",
        "EnableSearching", "LastTopVisibleEntry", "PreviousParentGroup", "Tags", "CustomData", "Item", "Key",
        "Value", "String", "Binary", "AutoType", "Enabled", "DataTransferObfuscation", "DefaultSequence",
        "Association", "Window", "KeystrokeSequence", "ForegroundColor", "BackgroundColor", "OverrideURL",
        "QualityCheck", "DeletedObjects", "DeletedObject", "DeletionTime", "Generator", "HeaderHash",
        "SettingsChanged", "DatabaseName", "DatabaseNameChanged", "DatabaseDescription",
        "DatabaseDescriptionChanged", "DefaultUserName", "DefaultUserNameChanged", "MaintenanceHistoryDays",
        "Color", "MasterKeyChanged", "MasterKeyChangeRec", "MasterKeyChangeForce", "MasterKeyChangeForceOnce",
        "MemoryProtection", "ProtectTitle", "ProtectUserName", "ProtectPassword", "ProtectURL", "ProtectNotes",
        "CustomIcons", "Icon", "Data", "RecycleBinEnabled", "RecycleBinUUID", "RecycleBinChanged",
        "EntryTemplatesGroup", "EntryTemplatesGroupChanged", "HistoryMaxItems", "HistoryMaxSize",
        "LastSelectedGroup", "LastTopVisibleGroup", "Binaries",
        // Attribute names share the table.
        "Protected", "Ref", "ID", "Compressed", "ProtectInMemory",
    ]

    static let keePassFile = ElementName(id: 0), meta = ElementName(id: 1), root = ElementName(id: 2)
    static let group = ElementName(id: 3), entry = ElementName(id: 4), history = ElementName(id: 5)
    static let uuid = ElementName(id: 6), name = ElementName(id: 7), notes = ElementName(id: 8)
    static let iconID = ElementName(id: 9), customIconUUID = ElementName(id: 10), times = ElementName(id: 11)
    static let creationTime = ElementName(id: 12), lastModificationTime = ElementName(id: 13)
    static let lastAccessTime = ElementName(id: 14), expiryTime = ElementName(id: 15), expires = ElementName(id: 16)
    static let usageCount = ElementName(id: 17), locationChanged = ElementName(id: 18)
    static let isExpanded = ElementName(id: 19), defaultAutoTypeSequence = ElementName(id: 20)
    static let enableAutoType = ElementName(id: 21), enableSearching = ElementName(id: 22)
    static let lastTopVisibleEntry = ElementName(id: 23), previousParentGroup = ElementName(id: 24)
    static let tags = ElementName(id: 25), customData = ElementName(id: 26), item = ElementName(id: 27)
    static let key = ElementName(id: 28), value = ElementName(id: 29), string = ElementName(id: 30)
    static let binary = ElementName(id: 31), autoType = ElementName(id: 32), enabled = ElementName(id: 33)
    static let dataTransferObfuscation = ElementName(id: 34), defaultSequence = ElementName(id: 35)
    static let association = ElementName(id: 36), window = ElementName(id: 37), keystrokeSequence = ElementName(id: 38)
    static let foregroundColor = ElementName(id: 39), backgroundColor = ElementName(id: 40)
    static let overrideURL = ElementName(id: 41), qualityCheck = ElementName(id: 42)
    static let deletedObjects = ElementName(id: 43), deletedObject = ElementName(id: 44)
    static let deletionTime = ElementName(id: 45), generator = ElementName(id: 46), headerHash = ElementName(id: 47)
    static let settingsChanged = ElementName(id: 48), databaseName = ElementName(id: 49)
    static let databaseNameChanged = ElementName(id: 50), databaseDescription = ElementName(id: 51)
    static let databaseDescriptionChanged = ElementName(id: 52), defaultUserName = ElementName(id: 53)
    static let defaultUserNameChanged = ElementName(id: 54), maintenanceHistoryDays = ElementName(id: 55)
    static let color = ElementName(id: 56), masterKeyChanged = ElementName(id: 57)
    static let masterKeyChangeRec = ElementName(id: 58), masterKeyChangeForce = ElementName(id: 59)
    static let masterKeyChangeForceOnce = ElementName(id: 60), memoryProtection = ElementName(id: 61)
    static let protectTitle = ElementName(id: 62), protectUserName = ElementName(id: 63)
    static let protectPassword = ElementName(id: 64), protectURL = ElementName(id: 65)
    static let protectNotes = ElementName(id: 66), customIcons = ElementName(id: 67), icon = ElementName(id: 68)
    static let data = ElementName(id: 69), recycleBinEnabled = ElementName(id: 70)
    static let recycleBinUUID = ElementName(id: 71), recycleBinChanged = ElementName(id: 72)
    static let entryTemplatesGroup = ElementName(id: 73), entryTemplatesGroupChanged = ElementName(id: 74)
    static let historyMaxItems = ElementName(id: 75), historyMaxSize = ElementName(id: 76)
    static let lastSelectedGroup = ElementName(id: 77), lastTopVisibleGroup = ElementName(id: 78)
    static let binaries = ElementName(id: 79)
    static let protectedAttribute = ElementName(id: 80), refAttribute = ElementName(id: 81)
    static let idAttribute = ElementName(id: 82), compressedAttribute = ElementName(id: 83)
    static let protectInMemoryAttribute = ElementName(id: 84)
}

/// Interns element names: libxml2 hands out one pointer per distinct name (its dictionary), so a
/// name is turned into a Swift string only the first time its pointer is seen.
/// A class, confined to one thread like its owner: handing it to every value conversion (for error
/// messages) then costs no copy of its five collections.
final class ElementNameTable {
    /// A direct-mapped cache in front of the dictionary: most lookups hit it. libxml2 packs its names
    /// a few bytes apart, so the slot comes from a multiplicative hash of the whole pointer. Plain
    /// buffers: every start tag and attribute of a document is looked up here.
    private static let cacheBits = 10
    private let recentPointers: UnsafeMutablePointer<UnsafeRawPointer?>
    private let recentNames: UnsafeMutablePointer<ElementName>
    @exclusivity(unchecked) private var byPointer: [UnsafeRawPointer: ElementName] = [:]
    @exclusivity(unchecked) private var byString: [String: ElementName]
    @exclusivity(unchecked) private(set) var strings: [String]

    init() {
        strings = ElementName.knownNames
        byString = Dictionary(uniqueKeysWithValues: ElementName.knownNames.enumerated().map { ($1, ElementName(id: Int32($0))) })
        recentPointers = .allocate(capacity: 1 << Self.cacheBits)
        recentPointers.initialize(repeating: nil, count: 1 << Self.cacheBits)
        recentNames = .allocate(capacity: 1 << Self.cacheBits)
        recentNames.initialize(repeating: ElementName(id: -1), count: 1 << Self.cacheBits)
    }

    deinit {
        recentPointers.deallocate()
        recentNames.deallocate()
    }

    /// The identifier of the name at `pointer` (a NUL-terminated UTF-8 string).
    @inline(__always)
    func intern(_ pointer: UnsafePointer<UInt8>) -> ElementName {
        let raw = UnsafeRawPointer(pointer)
        let slot = Int(truncatingIfNeeded: (UInt(bitPattern: raw) &* 0x9E37_79B9_7F4A_7C15) >> (UInt.bitWidth - Self.cacheBits))
        if recentPointers[slot] == raw { return recentNames[slot] }
        return internMissed(raw, slot: slot)
    }

    private func internMissed(_ raw: UnsafeRawPointer, slot: Int) -> ElementName {
        let name: ElementName
        if let known = byPointer[raw] {
            name = known
        } else {
            name = intern(String(cString: raw.assumingMemoryBound(to: UInt8.self)))
            byPointer[raw] = name
        }
        recentPointers[slot] = raw
        recentNames[slot] = name
        return name
    }

    /// The identifier of `string`.
    func intern(_ string: String) -> ElementName {
        if let known = byString[string] { return known }
        let name = ElementName(id: Int32(strings.count))
        strings.append(string)
        byString[string] = name
        return name
    }

    func string(_ name: ElementName) -> String { strings[Int(name.id)] }
}

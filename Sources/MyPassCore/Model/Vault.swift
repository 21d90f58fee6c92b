internal import Foundation

/// One immutable snapshot of a KeePass vault: settings, the group tree, tombstones and the pooled
/// attachment contents. Edits return new snapshots; a snapshot never changes under its holder.
public struct Vault: Sendable, Hashable {
    /// The vault-wide settings.
    public var meta: Meta
    /// The root group: every group and entry is below it.
    public var root: Group
    /// Tombstones of deleted groups and entries.
    public var deletedObjects: [DeletedObject]
    /// The attachments' bytes, once each.
    public var binaries: BinaryPool
    /// Unknown children of `<KeePassFile>` and of `<Root>`, kept.
    public var preservedFileElements: [PreservedXML]
    /// Unknown elements of `<Root>`, kept.
    public var preservedRootElements: [PreservedXML]

    /// A vault with these parts.
    public init(
        meta: Meta, root: Group, deletedObjects: [DeletedObject] = [], binaries: BinaryPool = BinaryPool(),
        preservedFileElements: [PreservedXML] = [], preservedRootElements: [PreservedXML] = []
    ) {
        self.meta = meta
        self.root = root
        self.deletedObjects = deletedObjects
        self.binaries = binaries
        self.preservedFileElements = preservedFileElements
        self.preservedRootElements = preservedRootElements
    }

    /// A new empty vault named `name` with a root group, as KeePassXC creates one.
    public static func empty(name: String, at time: Timestamp = .now()) -> Vault {
        var meta = Meta()
        meta.databaseName = name
        meta.databaseNameChanged = time
        meta.databaseDescriptionChanged = time
        meta.defaultUserNameChanged = time
        meta.masterKeyChanged = time
        meta.recycleBinChanged = time
        meta.entryTemplatesGroupChanged = time
        meta.settingsChanged = time
        let root = Group(uuid: UUID(), name: name.isEmpty ? "Root" : name, times: Times(allAt: time))
        return Vault(meta: meta, root: root)
    }
}

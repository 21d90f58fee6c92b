internal import Foundation

/// One immutable snapshot of a KeePass vault: settings, the group tree, tombstones and the pooled
/// attachment contents. Edits return new snapshots; a snapshot never changes under its holder.
public struct Vault: Sendable, Hashable {
    public var meta: Meta
    public var root: Group
    public var deletedObjects: [DeletedObject]
    public var binaries: BinaryPool
    /// Unknown children of `<KeePassFile>` and of `<Root>`, kept.
    public var preservedFileElements: [PreservedXML]
    public var preservedRootElements: [PreservedXML]

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

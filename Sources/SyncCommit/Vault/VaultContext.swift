public import SyncFiles
public import SyncState
public import KDBXFormat
internal import MyPassCore

/// One vault as the sync layer works on it: where it is, the key that opens it, how far an open may
/// go, where this device keeps its state and the device's settings. Handed to the watcher and the
/// sessions it starts as one value, instead of parameter lists and settings assigned afterwards.
public struct VaultContext: Sendable {
    /// The vault file (a resolved path for a watcher).
    public let path: String
    /// The vault's composite key.
    public let key: CompositeKey
    /// The resource caps every open of this vault and its other versions uses.
    public let limits: ResourceLimits
    /// This device's sync state.
    public let state: SyncStateStore
    /// This device's settings (backups, KDF salt rotation).
    public let settings: DeviceSettings
    /// The file system the vault and its state are on (the state store's).
    public var fileSystem: FileSystem { state.fileSystem }

    /// The context of the vault at `path`.
    public init(path: String, key: CompositeKey, limits: ResourceLimits = .standard, state: SyncStateStore,
                settings: DeviceSettings) {
        self.path = path
        self.key = key
        self.limits = limits
        self.state = state
        self.settings = settings
    }
}

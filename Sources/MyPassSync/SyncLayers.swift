// What an app embeds with `import MyPassSync`: the sync layers, each its own target so that the
// compiler keeps their arrows pointing one way (docs/ARCHITECTURE.md), re-exported as one module.
@_exported public import SyncFiles
@_exported public import SyncState
@_exported public import SyncCommit
@_exported public import SyncWatch
@_exported public import SyncRemote
@_exported public import SyncCredentials
@_exported public import SyncDaemon

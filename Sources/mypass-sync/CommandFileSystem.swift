internal import SyncFiles

/// The file system every command of this process works on: the real one, or — in a debug build, for
/// the tests that run this tool — one failing where `MYPASS_SYNC_FAULTS` plans (docs/internals.md).
/// Read once; handed to the state store and every read and write a command makes.
enum CommandFileSystem {
    /// This process's file system.
    static let current = FileSystem.fromEnvironment()
}

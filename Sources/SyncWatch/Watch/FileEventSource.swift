public import SyncFiles
internal import SyncState
internal import SyncCommit
/// One change in a watched folder, as the engine needs it.
public enum FileEvent: Sendable, Equatable {
    /// A file in the folder was written, created or moved in.
    case changed(directory: String, name: String)
    /// A file in the folder was deleted or moved out.
    case removed(directory: String, name: String)
    /// The folder itself was deleted or moved away (the source watches its path again when it is back).
    case directoryGone(String)
    /// A folder that was gone is back: everything in it must be looked at again.
    case directoryBack(String)
    /// Events were lost (the kernel's queue overflowed): everything must be looked at again.
    case overflow
    /// File events cannot be delivered (a watch limit, an unsupported file system): poll instead.
    case unavailable(reason: String)
}

/// Where file events come from: the platform seam of the watch engine. On Linux it is inotify
/// (`DirectoryEvents`); on Apple platforms FSEvents or an `NSFilePresenter` would implement it
/// (compile-guarded where `DirectoryEvents` is); a test hands in its own.
public protocol FileEventSource: AnyObject, Sendable {
    /// Starts watching `directory` on `fileSystem`; `handler` gets its events (on the source's own
    /// thread) until `stopWatching` with the returned token.
    func watch(_ directory: String, on fileSystem: FileSystem, handler: @escaping @Sendable (FileEvent) -> Void) -> Int
    /// Stops delivering to the handler registered under `token`.
    func stopWatching(_ token: Int)
}

/// The file-event source of this platform, if it has one (else the engine polls).
public func platformFileEventSource() -> (any FileEventSource)? {
    #if os(Linux)
    DirectoryEvents.instance
    #else
    nil
    #endif
}

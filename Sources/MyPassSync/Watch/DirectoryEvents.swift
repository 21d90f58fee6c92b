internal import Foundation
internal import CInotifyTools
#if canImport(Glibc)
internal import Glibc
#endif

/// Change notifications for the folders that hold the watched vaults, from libinotifytools.
///
/// libinotifytools keeps global state, is not thread-safe and reuses its event buffer, so one
/// dedicated thread owns it for the life of the process: it initialises the library, marks the
/// inotify descriptor close-on-exec, adds the watches, and waits for events with a one-second
/// timeout (so that `stop` is noticed), copying each event before handing it on.
public final class DirectoryEvents: @unchecked Sendable {
    /// One change in a watched folder.
    public struct Event: Sendable, Equatable {
        public let directory: String
        /// The file name inside the folder ("" for the folder itself).
        public let name: String
        public let mask: UInt32

        /// The folder itself was deleted or moved away.
        public var directoryGone: Bool { mask & (UInt32(IN_DELETE_SELF) | UInt32(IN_MOVE_SELF)) != 0 }
        /// The kernel dropped events: everything must be rescanned.
        public var overflow: Bool { mask & UInt32(IN_Q_OVERFLOW) != 0 }
    }

    /// The mask watched: writes finished, files moved in or out, created, deleted, the folder itself.
    static let watchedEvents = Int32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_DELETE_SELF | IN_MOVE_SELF)

    private static let shared = DirectoryEvents()
    private let lock = NSLock()
    private var started = false
    private var stopping = false
    private var pendingDirectories: [String] = []
    private var handlers: [(Event) -> Void] = []
    /// Why inotify cannot be used (then callers poll).
    public private(set) var unavailable: String?

    /// The process's one instance (libinotifytools is global).
    public static var instance: DirectoryEvents { shared }

    /// Watches `directory` and calls `handler` (on the watcher thread) for each event.
    public func watch(_ directory: String, handler: @escaping @Sendable (Event) -> Void) {
        lock.lock()
        pendingDirectories.append(directory)
        handlers.append(handler)
        let needsStart = !started
        started = true
        lock.unlock()
        if needsStart {
            let thread = Thread { [self] in run() }
            thread.name = "mypass-sync inotify"
            thread.start()
        }
    }

    /// Asks the watcher thread to end (within about a second).
    public func stop() {
        lock.lock()
        stopping = true
        lock.unlock()
    }

    private func run() {
        guard inotifytools_initialize() != 0 else {
            lock.lock()
            unavailable = "inotify could not be initialised (errno \(inotifytools_error()))"
            lock.unlock()
            return
        }
        markInotifyDescriptorsCloseOnExec()
        var watched: [String: Bool] = [:]
        /// Folders whose watch ended (deleted or moved away): watched again when they are back.
        var lost: Set<String> = []
        while true {
            lock.lock()
            let shouldStop = stopping
            let directories = pendingDirectories
            pendingDirectories = []
            let currentHandlers = handlers
            lock.unlock()
            if shouldStop { break }
            for directory in directories where watched[directory] == nil {
                if let error = SystemCalls.addWatch(directory, events: Self.watchedEvents, using: { inotifytools_watch_file($0, $1) },
                                                    lastError: { inotifytools_error() }) {
                    let reason = error == ENOSPC
                        ? "the inotify watch limit is reached (raise fs.inotify.max_user_watches)"
                        : "inotify cannot watch \(directory) (\(String(cString: strerror(error))))"
                    lock.lock()
                    unavailable = reason + "; polling only"
                    lock.unlock()
                } else {
                    watched[directory] = true
                }
            }
            for directory in lost.sorted() where FileManager.default.fileExists(atPath: directory) {
                if inotifytools_watch_file(directory, Self.watchedEvents) != 0 {
                    lost.remove(directory)
                    // Back: everything in it must be looked at again.
                    let rescan = Event(directory: directory, name: "", mask: UInt32(IN_Q_OVERFLOW))
                    for handler in currentHandlers { handler(rescan) }
                }
            }
            guard let raw = inotifytools_next_event(1) else { continue }
            // Copy everything out of libinotifytools' buffer before the next call reuses it.
            let mask = raw.pointee.mask
            // The name follows the fixed part of the event in the same buffer.
            let name = raw.pointee.len > 0
                ? String(cString: UnsafeRawPointer(raw).advanced(by: MemoryLayout<inotify_event>.size).assumingMemoryBound(to: CChar.self))
                : ""
            let directory = inotifytools_filename_from_wd(raw.pointee.wd).map { String(cString: $0) } ?? ""
            let event = Event(directory: directory.hasSuffix("/") ? String(directory.dropLast()) : directory, name: name, mask: mask)
            if event.directoryGone && !event.directory.isEmpty {
                // The watch follows the folder's inode; the vault lives at its path: watch the path again.
                _ = inotifytools_remove_watch_by_wd(raw.pointee.wd)
                lost.insert(event.directory)
            }
            for handler in currentHandlers { handler(event) }
        }
        inotifytools_cleanup()
    }

    /// libinotifytools opens its descriptor without close-on-exec; mark every inotify descriptor.
    private func markInotifyDescriptorsCloseOnExec() {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return }
        for entry in entries {
            guard let descriptor = Int32(entry),
                  let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(entry)"),
                  target.contains("inotify") else { continue }
            let flags = fcntl(descriptor, F_GETFD)
            if flags >= 0 { _ = fcntl(descriptor, F_SETFD, flags | FD_CLOEXEC) }
        }
    }
}

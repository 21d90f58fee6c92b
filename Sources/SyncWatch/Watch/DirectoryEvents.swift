#if os(Linux)
internal import Foundation
internal import SyncFiles
internal import SyncState
internal import SyncCommit
internal import CInotifyTools
internal import Glibc

/// File events for the folders that hold the watched vaults, from libinotifytools.
///
/// libinotifytools keeps global state, is not thread-safe and reuses its event buffer, so one
/// dedicated thread owns it while anything is watched: it initialises the library, marks the
/// inotify descriptor close-on-exec, adds the watches, and waits for events with a one-second
/// timeout (so that the last `stopWatching` is noticed), copying each event before handing it on.
/// When nothing is watched any more the thread cleans up and ends; a later `watch` starts a new one.
// @unchecked: the mutable state is touched only while `lock` (an NSCondition: `watch` waits on it for
// an ending inotify thread, which `Mutex` cannot) is locked; libinotifytools itself only on that thread.
public final class DirectoryEvents: FileEventSource, @unchecked Sendable {
    /// The mask watched: writes finished, files moved in or out, created, deleted, the folder itself.
    static let watchedEvents = Int32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_DELETE_SELF | IN_MOVE_SELF)

    private static let shared = DirectoryEvents()
    private let lock = NSCondition()
    private var running = false
    private var pendingDirectories: [String] = []
    private var handlers: [Int: @Sendable (FileEvent) -> Void] = [:]
    private var nextToken = 1

    /// The process's one instance (libinotifytools is global).
    public static var instance: DirectoryEvents { shared }

    /// Watches `directory` with inotify; `handler` gets its events on the inotify thread.
    public func watch(_ directory: String, handler: @escaping @Sendable (FileEvent) -> Void) -> Int {
        lock.lock()
        defer { lock.unlock() }
        // A thread that is ending (its last handler went) finishes first: the library is global.
        while running && handlers.isEmpty { lock.wait() }
        let token = nextToken
        nextToken += 1
        handlers[token] = handler
        pendingDirectories.append(directory)
        if !running {
            running = true
            let thread = Thread { [self] in run() }
            thread.name = "mypass-sync inotify"
            thread.start()
        }
        return token
    }

    /// Stops delivering to the handler of `token`; the thread ends when none is left.
    public func stopWatching(_ token: Int) {
        lock.lock()
        handlers[token] = nil
        lock.unlock()
    }

    private func deliver(_ event: FileEvent, to handlers: [@Sendable (FileEvent) -> Void]) {
        for handler in handlers { handler(event) }
    }

    private func run() {
        defer {
            lock.lock()
            running = false
            pendingDirectories = []
            lock.broadcast()
            lock.unlock()
        }
        guard inotifytools_initialize() != 0 else {
            lock.lock()
            let current = Array(handlers.values)
            lock.unlock()
            deliver(.unavailable(reason: "inotify could not be initialised (errno \(inotifytools_error())); polling only"), to: current)
            return
        }
        defer { inotifytools_cleanup() }
        markInotifyDescriptorsCloseOnExec()
        var watched: Set<String> = []
        /// Folders whose watch ended (deleted or moved away): watched again when they are back.
        var lost: Set<String> = []
        while true {
            lock.lock()
            let directories = pendingDirectories
            pendingDirectories = []
            let current = Array(handlers.values)
            lock.unlock()
            if current.isEmpty { return }
            for directory in directories where !watched.contains(directory) {
                if let error = SystemCalls.addWatch(directory, events: Self.watchedEvents, using: { inotifytools_watch_file($0, $1) },
                                                    lastError: { inotifytools_error() }) {
                    let reason = error == ENOSPC
                        ? "the inotify watch limit is reached (raise fs.inotify.max_user_watches)"
                        : "inotify cannot watch \(directory) (\(String(cString: strerror(error))))"
                    deliver(.unavailable(reason: reason + "; polling only"), to: current)
                } else {
                    watched.insert(directory)
                }
            }
            for directory in lost.sorted() where FileManager.default.fileExists(atPath: directory) {
                if SystemCalls.addWatch(directory, events: Self.watchedEvents, using: { inotifytools_watch_file($0, $1) },
                                        lastError: { inotifytools_error() }) == nil {
                    lost.remove(directory)
                    deliver(.directoryBack(directory), to: current)
                }
            }
            guard let raw = inotifytools_next_event(1) else { continue }
            // Copy everything out of libinotifytools' buffer before the next call reuses it.
            let mask = raw.pointee.mask
            // The name follows the fixed part of the event in the same buffer.
            let name = raw.pointee.len > 0
                ? String(cString: UnsafeRawPointer(raw).advanced(by: MemoryLayout<inotify_event>.size).assumingMemoryBound(to: CChar.self))
                : ""
            var directory = inotifytools_filename_from_wd(raw.pointee.wd).map { String(cString: $0) } ?? ""
            if directory.hasSuffix("/") { directory.removeLast() }
            let event: FileEvent
            if mask & UInt32(IN_Q_OVERFLOW) != 0 {
                event = .overflow
            } else if mask & (UInt32(IN_DELETE_SELF) | UInt32(IN_MOVE_SELF)) != 0 {
                // The watch follows the folder's inode; the vault lives at its path: watch the path again.
                _ = inotifytools_remove_watch_by_wd(raw.pointee.wd)
                lost.insert(directory)
                watched.remove(directory)
                event = .directoryGone(directory)
            } else if mask & (UInt32(IN_DELETE) | UInt32(IN_MOVED_FROM)) != 0 {
                event = .removed(directory: directory, name: name)
            } else {
                event = .changed(directory: directory, name: name)
            }
            if case .directoryGone(let gone) = event, gone.isEmpty { continue }
            deliver(event, to: current)
        }
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
#endif

#if os(Linux)
internal import Foundation
public import SyncFiles
internal import SyncState
internal import SyncCommit
internal import CInotifyTools
internal import Glibc

/// File events for the folders that hold the watched vaults, from libinotifytools.
///
/// libinotifytools keeps global state, is not thread-safe and reuses its event buffer, so one
/// dedicated thread owns it while anything is watched: it initialises the library, marks the
/// inotify descriptor close-on-exec, adds the watches, and sleeps in `poll` on that descriptor and
/// a wake pipe (written by `watch` and `stopWatching`), copying each event before handing it on:
/// idle, it never wakes. Only while a watched folder is gone does it look every second whether the
/// folder is back. When nothing is watched any more the thread cleans up and ends; a later `watch`
/// starts a new one.
// @unchecked: the mutable state is touched only while `lock` (an NSCondition: `watch` waits on it for
// an ending inotify thread, which `Mutex` cannot) is locked; libinotifytools itself only on that thread.
public final class DirectoryEvents: FileEventSource, @unchecked Sendable {
    /// The mask watched: writes finished, files moved in or out, created, deleted, the folder itself.
    static let watchedEvents = Int32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_DELETE_SELF | IN_MOVE_SELF)

    private static let shared = DirectoryEvents()
    private let lock = NSCondition()
    private var running = false
    private var pendingDirectories: [(path: String, fileSystem: FileSystem)] = []
    private var handlers: [Int: @Sendable (FileEvent) -> Void] = [:]
    private var nextToken = 1
    /// Written to wake the event thread (a folder to watch, a handler gone); read end first.
    private let wakePipe: (read: Int32, write: Int32) = {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return (-1, -1) }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC); _ = fcntl(end, F_SETFL, O_NONBLOCK) }
        return (ends[0], ends[1])
    }()

    /// The process's one instance (libinotifytools is global).
    public static var instance: DirectoryEvents { shared }

    /// Watches `directory` (on `fileSystem`) with inotify; `handler` gets its events on the inotify thread.
    public func watch(_ directory: String, on fileSystem: FileSystem, handler: @escaping @Sendable (FileEvent) -> Void) -> Int {
        lock.lock()
        defer { lock.unlock() }
        // A thread that is ending (its last handler went) finishes first: the library is global.
        while running && handlers.isEmpty { lock.wait() }
        let token = nextToken
        nextToken += 1
        handlers[token] = handler
        pendingDirectories.append((directory, fileSystem))
        wake()
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
        wake()
    }

    /// Wakes the event thread from its `poll` (a full pipe already will).
    private func wake() {
        var byte: UInt8 = 1
        _ = Glibc.write(wakePipe.write, &byte, 1)
    }

    /// Sleeps until the inotify descriptor has events or the wake pipe was written (then emptied);
    /// whether the descriptor has events (a failed `poll` says so too, so that it is read).
    private func sleep(on inotifyDescriptor: Int32) -> Bool {
        var descriptors = [pollfd(fd: inotifyDescriptor, events: Int16(POLLIN), revents: 0), pollfd(fd: wakePipe.read, events: Int16(POLLIN), revents: 0)]
        guard poll(&descriptors, 2, -1) >= 0 else { return true }
        var buffer = [UInt8](repeating: 0, count: 64)
        while Glibc.read(wakePipe.read, &buffer, buffer.count) > 0 {}
        return descriptors[0].revents != 0
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
        let othersBefore = Self.inotifyDescriptors()
        guard inotifytools_initialize() != 0 else {
            lock.lock()
            let current = Array(handlers.values)
            lock.unlock()
            deliver(.unavailable(reason: "inotify could not be initialised (errno \(inotifytools_error())); polling only"), to: current)
            return
        }
        defer { inotifytools_cleanup() }
        let inotifyDescriptor = markInotifyDescriptorsCloseOnExec(besides: othersBefore)
        var watched: Set<String> = []
        /// The file system each folder was asked for on.
        var fileSystems: [String: FileSystem] = [:]
        /// Folders whose watch ended (deleted or moved away): watched again when they are back.
        var lost: Set<String> = []
        /// The last call found nothing within its timeout: libinotifytools holds no event.
        var drained = false
        while true {
            lock.lock()
            let directories = pendingDirectories
            pendingDirectories = []
            let current = Array(handlers.values)
            lock.unlock()
            if current.isEmpty { return }
            for (directory, fileSystem) in directories where !watched.contains(directory) {
                fileSystems[directory] = fileSystem
                if let error = SystemCalls.addWatch(directory, events: Self.watchedEvents, on: fileSystem, using: { inotifytools_watch_file($0, $1) },
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
                if SystemCalls.addWatch(directory, events: Self.watchedEvents, on: fileSystems[directory] ?? .real, using: { inotifytools_watch_file($0, $1) },
                                        lastError: { inotifytools_error() }) == nil {
                    lost.remove(directory)
                    deliver(.directoryBack(directory), to: current)
                }
            }
            // Once a wait of libinotifytools came back empty (its buffer is drained; it blocks without
            // a timeout when given 0, so it is always given one), sleep in `poll` until the kernel has
            // events, or a `watch` or `stopWatching` wakes the thread; a gone folder is looked for
            // every second instead.
            // Woken by `watch` or `stopWatching` alone: round again (the folders and handlers read
            // afresh) and back to sleep; by events: read them.
            if drained, lost.isEmpty, let inotifyDescriptor, wakePipe.read >= 0 {
                drained = !sleep(on: inotifyDescriptor)
                continue
            }
            guard let raw = inotifytools_next_event(1) else {
                drained = true
                continue
            }
            drained = false
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
            // To the handlers registered now: one added while this thread waited gets the event too.
            deliver(event, to: lock.withLock { Array(handlers.values) })
        }
    }

    /// libinotifytools opens its descriptor without close-on-exec; mark every inotify descriptor.
    /// The one that is not among `others` (libinotifytools' own, opened since), when there is one.
    private func markInotifyDescriptorsCloseOnExec(besides others: Set<Int32>) -> Int32? {
        let all = Self.inotifyDescriptors()
        for descriptor in all {
            let flags = fcntl(descriptor, F_GETFD)
            if flags >= 0 { _ = fcntl(descriptor, F_SETFD, flags | FD_CLOEXEC) }
        }
        let new = all.subtracting(others)
        return new.count == 1 ? new.first : nil
    }

    /// The process's open inotify descriptors.
    private static func inotifyDescriptors() -> Set<Int32> {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return Set(entries.compactMap { entry in
            guard let descriptor = Int32(entry),
                  let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(entry)"),
                  target.contains("inotify") else { return nil }
            return descriptor
        })
    }
}
#endif

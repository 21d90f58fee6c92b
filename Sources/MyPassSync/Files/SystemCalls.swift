internal import CRename
public import Foundation
#if canImport(Glibc)
internal import Glibc
#endif

/// The one gate every system call of the save path goes through, so that tests can make the N-th
/// call of an operation fail (ENOSPC, EIO, EINTR) or write short, in this process or — through the
/// documented test variable `MYPASS_SYNC_FAULTS` — in a `mypass-sync` child process.
public enum SystemCalls {
    /// The operations the gate knows.
    public enum Operation: String, Sendable, CaseIterable {
        case open, write, fsync, close, rename, unlink, directorySync, watch
    }

    /// A planned failure: the `occurrence`-th call (1-based) of `operation` — counting only calls on
    /// paths containing `pathContains`, when given — fails with `errorNumber`, or, with `shortWrite`,
    /// writes only half of what it was given.
    public struct Fault: Sendable, Equatable {
        public var operation: Operation
        public var occurrence: Int
        public var errorNumber: Int32
        public var shortWrite: Bool
        public var pathContains: String?

        public init(_ operation: Operation, occurrence: Int, errorNumber: Int32 = EIO, shortWrite: Bool = false, pathContains: String? = nil) {
            self.operation = operation
            self.occurrence = occurrence
            self.errorNumber = errorNumber
            self.shortWrite = shortWrite
            self.pathContains = pathContains
        }

        /// Parses `write:3:ENOSPC`, `fsync:1:EIO`, `write:2:short`, `rename:1:EINTR`, optionally followed by
        /// `:TEXT` to count only calls on paths containing TEXT (`write:1:ENOSPC:vault.kdbx`).
        public init?(parsing text: String) {
            let parts = text.split(separator: ":", maxSplits: 3).map(String.init)
            guard parts.count >= 3, let operation = Operation(rawValue: parts[0]), let occurrence = Int(parts[1]) else { return nil }
            let filter = parts.count == 4 ? parts[3] : nil
            let errors: [String: Int32] = ["ENOSPC": ENOSPC, "EIO": EIO, "EINTR": EINTR, "EACCES": EACCES]
            if parts[2] == "short" {
                self.init(operation, occurrence: occurrence, errorNumber: 0, shortWrite: true, pathContains: filter)
            } else if let number = errors[parts[2]] {
                self.init(operation, occurrence: occurrence, errorNumber: number, pathContains: filter)
            } else {
                return nil
            }
        }
    }

    private static let plan = FaultPlan()

    /// Replaces the planned faults (and restarts the call counts).
    public static func inject(_ faults: [Fault]) { plan.set(faults) }

    /// Reads faults from `MYPASS_SYNC_FAULTS` (comma-separated, e.g. `write:2:ENOSPC`); a test convenience.
    public static func injectFromEnvironment() {
        guard let text = ProcessInfo.processInfo.environment["MYPASS_SYNC_FAULTS"], !text.isEmpty else { return }
        inject(text.split(separator: ",").compactMap { Fault(parsing: String($0)) })
    }

    /// The planned fault for the next call of `operation` on `path`, if any.
    private static func fault(for operation: Operation, path: String?) -> Fault? { plan.next(operation, path: path) }

    /// Adds an inotify watch through libinotifytools; returns errno on failure (ENOSPC: the user's
    /// watch limit, fs.inotify.max_user_watches, is reached).
    static func addWatch(_ directory: String, events: Int32, using add: (String, Int32) -> Int32, lastError: () -> Int32) -> Int32? {
        if let fault = fault(for: .watch, path: directory) { return fault.errorNumber }
        return add(directory, events) == 0 ? lastError() : nil
    }

    /// Opens `name` in `directory` (never through a symlink).
    static func open(_ name: String, in directory: DirectoryHandle, _ flags: Int32, _ mode: mode_t) -> Int32 {
        let path = directory.pathOf(name)
        if let fault = fault(for: .open, path: path) { errno = fault.errorNumber; return -1 }
        let descriptor = directory.openFile(name, flags, mode)
        if descriptor >= 0 { plan.remember(descriptor, path: path) }
        return descriptor
    }

    /// Writes all of `buffer`, retrying short writes and EINTR; returns errno on failure.
    static func writeAll(_ descriptor: Int32, _ buffer: UnsafeRawBufferPointer) -> Int32? {
        var offset = 0
        let path = plan.path(of: descriptor)
        while offset < buffer.count {
            var length = buffer.count - offset
            if let fault = fault(for: .write, path: path) {
                if fault.shortWrite {
                    length = max(1, length / 2)
                } else if fault.errorNumber == EINTR {
                    continue  // Interrupted before anything was written: try again.
                } else {
                    return fault.errorNumber
                }
            }
            let written = Glibc.write(descriptor, buffer.baseAddress! + offset, length)
            if written < 0 {
                if errno == EINTR { continue }
                return errno
            }
            offset += written
        }
        return nil
    }

    static func fsync(_ descriptor: Int32) -> Int32 {
        if let fault = fault(for: .fsync, path: plan.path(of: descriptor)) { errno = fault.errorNumber; return -1 }
        return Glibc.fsync(descriptor)
    }

    static func close(_ descriptor: Int32) -> Int32 {
        let path = plan.path(of: descriptor)
        plan.forget(descriptor)
        if let fault = fault(for: .close, path: path) {
            _ = Glibc.close(descriptor)
            errno = fault.errorNumber
            return -1
        }
        return Glibc.close(descriptor)
    }

    /// Renames `from` to `to`, both in `directory`, replacing whatever `to` names.
    static func rename(_ from: String, to: String, in directory: DirectoryHandle) -> Int32 {
        if let fault = fault(for: .rename, path: directory.pathOf(to)) { errno = fault.errorNumber; return -1 }
        guard DirectoryHandle.isSingleName(from), DirectoryHandle.isSingleName(to) else { errno = EINVAL; return -1 }
        return Glibc.renameat(directory.descriptor, from, directory.descriptor, to)
    }

    /// Swaps `from` and `to` in `directory` atomically (renameat2 RENAME_EXCHANGE); a `rename` fault applies.
    static func exchange(_ from: String, with to: String, in directory: DirectoryHandle) -> Int32 {
        if let fault = fault(for: .rename, path: directory.pathOf(to)) { errno = fault.errorNumber; return -1 }
        guard DirectoryHandle.isSingleName(from), DirectoryHandle.isSingleName(to) else { errno = EINVAL; return -1 }
        return mypass_rename_exchange(directory.descriptor, from, to)
    }

    /// Renames `from` to `to` in `directory` only if `to` does not exist (renameat2 RENAME_NOREPLACE).
    static func renameNoReplace(_ from: String, to: String, in directory: DirectoryHandle) -> Int32 {
        if let fault = fault(for: .rename, path: directory.pathOf(to)) { errno = fault.errorNumber; return -1 }
        guard DirectoryHandle.isSingleName(from), DirectoryHandle.isSingleName(to) else { errno = EINVAL; return -1 }
        return mypass_rename_no_replace(directory.descriptor, from, to)
    }

    /// Removes the file `name` from `directory` (a symlink there is removed, never its target).
    static func unlink(_ name: String, in directory: DirectoryHandle) -> Int32 {
        if let fault = fault(for: .unlink, path: directory.pathOf(name)) { errno = fault.errorNumber; return -1 }
        guard DirectoryHandle.isSingleName(name) else { errno = EINVAL; return -1 }
        return Glibc.unlinkat(directory.descriptor, name, 0)
    }

    /// fsync of a directory, so that a rename in it survives a power cut.
    static func syncDirectory(_ directory: DirectoryHandle) -> Int32 {
        if let fault = fault(for: .directorySync, path: directory.path) { errno = fault.errorNumber; return -1 }
        return Glibc.fsync(directory.descriptor)
    }
}

/// Planned faults and per-operation call counts, shared by all threads of the process.
private final class FaultPlan: @unchecked Sendable {
    private let lock = NSLock()
    private var faults: [SystemCalls.Fault] = []
    /// Calls seen per fault (each fault counts the calls that match it).
    private var counts: [Int: Int] = [:]
    private var paths: [Int32: String] = [:]

    func set(_ faults: [SystemCalls.Fault]) {
        lock.lock()
        self.faults = faults
        counts = [:]
        lock.unlock()
    }

    func next(_ operation: SystemCalls.Operation, path: String?) -> SystemCalls.Fault? {
        lock.lock()
        defer { lock.unlock() }
        guard !faults.isEmpty else { return nil }
        var hit: SystemCalls.Fault?
        for (index, fault) in faults.enumerated() where fault.operation == operation {
            if let filter = fault.pathContains, !(path?.contains(filter) ?? false) { continue }
            let count = (counts[index] ?? 0) + 1
            counts[index] = count
            if count == fault.occurrence && hit == nil { hit = fault }
        }
        return hit
    }

    func remember(_ descriptor: Int32, path: String) {
        lock.lock()
        paths[descriptor] = path
        lock.unlock()
    }

    func forget(_ descriptor: Int32) {
        lock.lock()
        paths[descriptor] = nil
        lock.unlock()
    }

    func path(of descriptor: Int32) -> String? {
        lock.lock()
        defer { lock.unlock() }
        return paths[descriptor]
    }
}

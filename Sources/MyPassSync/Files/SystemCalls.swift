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
        case open, write, fsync, close, rename, unlink, directorySync
    }

    /// A planned failure: the `occurrence`-th call (1-based) of `operation` fails with `errorNumber`,
    /// or, with `shortWrite`, writes only half of what it was given.
    public struct Fault: Sendable, Equatable {
        public var operation: Operation
        public var occurrence: Int
        public var errorNumber: Int32
        public var shortWrite: Bool

        public init(_ operation: Operation, occurrence: Int, errorNumber: Int32 = EIO, shortWrite: Bool = false) {
            self.operation = operation
            self.occurrence = occurrence
            self.errorNumber = errorNumber
            self.shortWrite = shortWrite
        }

        /// Parses `write:3:ENOSPC`, `fsync:1:EIO`, `write:2:short`, `rename:1:EINTR`.
        public init?(parsing text: String) {
            let parts = text.split(separator: ":").map(String.init)
            guard parts.count == 3, let operation = Operation(rawValue: parts[0]), let occurrence = Int(parts[1]) else { return nil }
            switch parts[2] {
            case "short": self.init(operation, occurrence: occurrence, errorNumber: 0, shortWrite: true)
            case "ENOSPC": self.init(operation, occurrence: occurrence, errorNumber: ENOSPC)
            case "EIO": self.init(operation, occurrence: occurrence, errorNumber: EIO)
            case "EINTR": self.init(operation, occurrence: occurrence, errorNumber: EINTR)
            case "EACCES": self.init(operation, occurrence: occurrence, errorNumber: EACCES)
            default: return nil
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

    /// The planned fault for the next call of `operation`, if any.
    private static func fault(for operation: Operation) -> Fault? { plan.next(operation) }

    static func open(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 {
        if let fault = fault(for: .open) { errno = fault.errorNumber; return -1 }
        return Glibc.open(path, flags, mode)
    }

    /// Writes all of `buffer`, retrying short writes and EINTR; returns errno on failure.
    static func writeAll(_ descriptor: Int32, _ buffer: UnsafeRawBufferPointer) -> Int32? {
        var offset = 0
        while offset < buffer.count {
            var length = buffer.count - offset
            if let fault = fault(for: .write) {
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
        if let fault = fault(for: .fsync) { errno = fault.errorNumber; return -1 }
        return Glibc.fsync(descriptor)
    }

    static func close(_ descriptor: Int32) -> Int32 {
        if let fault = fault(for: .close) {
            _ = Glibc.close(descriptor)
            errno = fault.errorNumber
            return -1
        }
        return Glibc.close(descriptor)
    }

    static func rename(_ from: String, _ to: String) -> Int32 {
        if let fault = fault(for: .rename) { errno = fault.errorNumber; return -1 }
        return Glibc.rename(from, to)
    }

    static func unlink(_ path: String) -> Int32 {
        if let fault = fault(for: .unlink) { errno = fault.errorNumber; return -1 }
        return Glibc.unlink(path)
    }

    /// fsync of a directory, so that a rename in it survives a power cut.
    static func syncDirectory(_ path: String) -> Int32 {
        if let fault = fault(for: .directorySync) { errno = fault.errorNumber; return -1 }
        let descriptor = Glibc.open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return -1 }
        defer { Glibc.close(descriptor) }
        return Glibc.fsync(descriptor)
    }
}

/// Planned faults and per-operation call counts, shared by all threads of the process.
private final class FaultPlan: @unchecked Sendable {
    private let lock = NSLock()
    private var faults: [SystemCalls.Fault] = []
    private var counts: [SystemCalls.Operation: Int] = [:]

    func set(_ faults: [SystemCalls.Fault]) {
        lock.lock()
        self.faults = faults
        counts = [:]
        lock.unlock()
    }

    func next(_ operation: SystemCalls.Operation) -> SystemCalls.Fault? {
        lock.lock()
        defer { lock.unlock() }
        guard !faults.isEmpty else { return nil }
        let count = (counts[operation] ?? 0) + 1
        counts[operation] = count
        return faults.first { $0.operation == operation && $0.occurrence == count }
    }
}

internal import Foundation

/// Lets a shutdown signal end the process at once except in the middle of a file replacement: a
/// write in progress (temp file, fsync, compare-and-swap rename) finishes first, and none starts
/// after the gate closed. Every step of a save is a whole file replaced, so a process ended between
/// two of them leaves each file either old or new, never half written. Carried by each `FileSystem`
/// value (the real file system's one gate, a test's file system a gate of its own), so a job's
/// writes pass the gate of the file system it was given.
public final class ShutdownGate: @unchecked Sendable {
    // Unchecked: `writes` and `closing` are read and written under `condition` only.
    private let condition = NSCondition()
    private var writes = 0
    private var closing = false

    /// An open gate.
    public init() {}

    /// Runs `body` (one file replacement) unless the gate closed: then this waits for the process to end.
    public func whileWriting<Value, Failure: Error>(_ body: () throws(Failure) -> Value) throws(Failure) -> Value {
        condition.lock()
        while closing { condition.wait() }  // the process exits meanwhile
        writes += 1
        condition.unlock()
        defer {
            condition.lock()
            writes -= 1
            condition.broadcast()
            condition.unlock()
        }
        return try body()
    }

    /// Starts no more writes and returns once those in progress have finished.
    public func closeAndWait() {
        condition.lock()
        closing = true
        while writes > 0 { condition.wait() }
        condition.unlock()
    }

    /// Whether a replacement is in progress (tests).
    var isWriting: Bool {
        condition.lock()
        defer { condition.unlock() }
        return writes > 0
    }
}

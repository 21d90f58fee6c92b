internal import Foundation

/// Lets a shutdown signal end the process at once except in the middle of a file replacement: a
/// write in progress (temp file, fsync, compare-and-swap rename) finishes first, and none starts
/// after the signal. Every step of a save is a whole file replaced, so a process ended between two
/// of them leaves each file either old or new, never half written.
public enum ShutdownGate {
    private static let condition = NSCondition()
    nonisolated(unsafe) private static var writes = 0
    nonisolated(unsafe) private static var closing = false

    /// Runs `body` (one file replacement) unless the process is ending: then this waits for the end.
    public static func whileWriting<Value, Failure: Error>(_ body: () throws(Failure) -> Value) throws(Failure) -> Value {
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
    public static func closeAndWait() {
        condition.lock()
        closing = true
        while writes > 0 { condition.wait() }
        condition.unlock()
    }
}

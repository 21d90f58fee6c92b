public import Foundation
internal import Synchronization
public import Testing

/// Waits until `condition` holds, checking it every `interval` seconds; after `timeout` seconds
/// without it, records a test issue naming `what` and returns false. A wait on a real condition with
/// a deadline, not a fixed sleep: it ends as soon as the condition holds.
@discardableResult
public func waitUntil(
    _ what: @autoclosure () -> String, timeout: Double = 30, interval: Double = 0.02,
    sourceLocation: SourceLocation = #_sourceLocation, _ condition: () throws -> Bool
) rethrows -> Bool {
    if try pollUntil(timeout: timeout, interval: interval, condition) { return true }
    Issue.record("waited \(timeout) s for \(what()) in vain", sourceLocation: sourceLocation)
    return false
}

/// Whether `condition` came to hold within `timeout` seconds, checked every `interval` seconds (no
/// issue recorded: for waits whose caller reports the failure itself, or where a timeout is an answer).
public func pollUntil(timeout: Double, interval: Double = 0.02, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while true {
        if try condition() { return true }
        let left = deadline.timeIntervalSinceNow
        if left <= 0 { return false }
        pause(min(interval, left))
    }
}

/// Waits until the wall clock has entered its next second. KDBX times (and KeePass's
/// `MasterKeyChanged`) have one-second resolution: whatever is stamped after this returns is stamped
/// later than anything stamped before it was called. The one wait on the clock itself.
public func waitForNextClockSecond() {
    let start = Date().timeIntervalSince1970.rounded(.down)
    while Date().timeIntervalSince1970.rounded(.down) == start {
        pause(max(0.001, start + 1 - Date().timeIntervalSince1970))
    }
}

private func pause(_ seconds: Double) {
    Thread.sleep(forTimeInterval: seconds)
}

/// Everything a child process writes to one pipe, collected as it arrives on a thread of its own, so
/// that a test can wait for a line (an event) while the process runs.
public final class OutputCollector: Sendable {
    private let data = Mutex(Data())
    private let ended = DispatchSemaphore(value: 0)

    /// Starts reading `handle` (the read end of a child's output pipe) until its end. With a `limit`,
    /// only the last `limit` bytes are kept (a long-running program's chatter cannot fill the memory).
    public init(_ handle: FileHandle, limit: Int? = nil) {
        Thread { [self] in
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                data.withLock {
                    $0.append(chunk)
                    if let limit, $0.count > limit { $0 = Data($0.suffix(limit)) }
                }
            }
            ended.signal()
        }.start()
    }

    /// What arrived so far.
    public var text: String { String(decoding: data.withLock { $0 }, as: UTF8.self) }

    /// Everything, once the writer closed the pipe (the process ended; at most `timeout` seconds).
    public func all(timeout: Double = 30) -> Data {
        if ended.wait(timeout: .now() + timeout) == .success { ended.signal() }
        return data.withLock { $0 }
    }
}

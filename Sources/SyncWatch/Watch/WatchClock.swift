public import Foundation

/// The time the watch loop reads and sleeps on: the system's, or one a test (or an app's own test)
/// sets by hand, so that debounce, retries and back-off are checked to the millisecond without
/// waiting for them.
public protocol WatchClock: Sendable {
    /// The time now.
    var now: Date { get }
    /// Sleeps on `condition` (locked by the caller, as for `NSCondition.wait`) until `deadline` on
    /// this clock (nil: no deadline) or until the condition is signalled, whichever comes first.
    func wait(on condition: NSCondition, until deadline: Date?)
}

/// The system clock: `Date()`, and `NSCondition`'s own timed wait.
public struct SystemClock: WatchClock {
    /// The system clock.
    public init() {}

    public var now: Date { Date() }

    public func wait(on condition: NSCondition, until deadline: Date?) {
        if let deadline {
            _ = condition.wait(until: deadline)
        } else {
            condition.wait()
        }
    }
}

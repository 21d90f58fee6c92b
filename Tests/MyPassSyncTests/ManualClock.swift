import Foundation
import Synchronization
@testable import SyncWatch
import TestSupport

/// A clock the test moves by hand (`advance`), for the watch loop: a sleeper wakes when the clock
/// passes its deadline or its condition is signalled. `waitUntilAsleep` returns once a sleeper went
/// to sleep after the last `advance`, that is once the loop has done everything that was due.
final class ManualClock: WatchClock, Sendable {
    private struct Sleeper {
        let condition: NSCondition
        /// The `advance` count when it went to sleep.
        let since: Int
    }
    private struct State {
        var now: Date
        var advances = 0
        var sleepers: [ObjectIdentifier: Sleeper] = [:]
    }
    private let state: Mutex<State>

    init(start: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        state = Mutex(State(now: start))
    }

    var now: Date { state.withLock { $0.now } }

    func wait(on condition: NSCondition, until deadline: Date?) {
        // Registered in the same step that reads the time: an `advance` either comes before (and the
        // deadline is seen as passed) or finds this sleeper and signals it once it sleeps (it holds
        // the condition's lock until `wait` lets go of it).
        let due = state.withLock { state -> Bool in
            if let deadline, deadline <= state.now { return true }
            state.sleepers[ObjectIdentifier(condition)] = Sleeper(condition: condition, since: state.advances)
            return false
        }
        guard !due else { return }
        condition.wait()
        _ = state.withLock { $0.sleepers.removeValue(forKey: ObjectIdentifier(condition)) }
    }

    /// Moves the clock on by `seconds` and wakes every sleeper.
    func advance(by seconds: TimeInterval) {
        let conditions = state.withLock { state in
            state.now = state.now.addingTimeInterval(seconds)
            state.advances += 1
            return state.sleepers.values.map(\.condition)
        }
        for condition in conditions {
            condition.lock()
            condition.broadcast()
            condition.unlock()
        }
    }

    /// Waits (real time, at most `seconds`) until a sleeper went to sleep since the last `advance`;
    /// whether one did.
    @discardableResult
    func waitUntilAsleep(timeout seconds: Double = 5) -> Bool {
        pollUntil(timeout: seconds, interval: 0.001) {
            state.withLock { state in state.sleepers.values.contains { $0.since == state.advances } }
        }
    }
}

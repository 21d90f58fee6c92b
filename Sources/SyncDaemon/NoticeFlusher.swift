internal import Foundation
public import SyncWatch

/// Runs the daemon's notice flush when it is due, on a thread of its own that sleeps on the daemon's
/// clock (`WatchClock`): the earliest time asked for wins, a later one waits for the flush before it
/// to ask again. Ended by `close`; a flush not yet due then never runs (the daemon sends what is
/// collected itself when it stops).
final class NoticeFlusher: @unchecked Sendable {
    // Unchecked: every stored property is read and written under `condition` only.
    private let clock: any WatchClock
    private let condition = NSCondition()
    private var due: Date?
    private var flush: (@Sendable () -> Void)?
    private var closed = false
    private var started = false

    init(clock: any WatchClock) {
        self.clock = clock
    }

    /// Runs `flush` at `time`, unless a flush is already due earlier (then that one runs, and asks again).
    func schedule(at time: Date, _ flush: @escaping @Sendable () -> Void) {
        condition.lock()
        defer { condition.unlock() }
        guard !closed else { return }
        if let due, due <= time { return }
        due = time
        self.flush = flush
        condition.signal()
        if !started {
            started = true
            Thread { [self] in run() }.start()
        }
    }

    /// Stops the thread; nothing scheduled runs after this returns.
    func close() {
        condition.lock()
        closed = true
        condition.signal()
        condition.unlock()
    }

    private func run() {
        condition.lock()
        while !closed {
            if let due, clock.now >= due, let flush {
                self.due = nil
                self.flush = nil
                condition.unlock()
                flush()
                condition.lock()
                continue
            }
            clock.wait(on: condition, until: due)
        }
        condition.unlock()
    }
}

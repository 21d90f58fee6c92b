public import Foundation
internal import Synchronization

/// How much time one vault may spend on versions from elsewhere that fail to open (deriving their
/// keys, inflating and parsing them) within a sliding window: the per-version budget
/// (`ForeignVersionBudget`) bounds one planted copy, this bounds them together and over time — eight
/// copies each at the per-copy maximum, or one copy rewritten every fraction of a second, cost at
/// most `seconds` per `window`, after which copies wait (`ForeignVersion.Refusal.deferred`) until the
/// window has room again. A version that opens is not counted: it was made with the vault's key,
/// which junk planted by someone without it never is.
/// Shared by the threads that open a vault's copies (the check and the copies opened ahead).
public final class ForeignWorkAllowance: Sendable {
    /// The time that counts.
    public let window: TimeInterval
    /// The opening time allowed within any `window`.
    public let seconds: TimeInterval
    /// The openings counted, oldest first: when each ended and how long it took.
    private let spent = Mutex<[(end: Date, seconds: TimeInterval)]>([])

    /// An allowance of `seconds` of failed opening per `window` (defaults: 10 s per ten minutes, a
    /// sixtieth of a core on average however often junk is planted, and one or two copies at the
    /// per-copy maximum; real copies open and are not counted).
    public init(seconds: TimeInterval = 10, per window: TimeInterval = 600) {
        self.seconds = seconds
        self.window = window
    }

    /// Whether another opening may start at `now` (the time spent within the window is below the allowance).
    public func admits(at now: Date) -> Bool {
        spent.withLock { spent in
            Self.forget(before: now.addingTimeInterval(-window), in: &spent)
            return spent.reduce(0) { $0 + $1.seconds } < seconds
        }
    }

    /// Counts an opening that ended at `end` after `duration` seconds.
    public func charge(_ duration: TimeInterval, endingAt end: Date) {
        spent.withLock { spent in
            spent.append((end, max(0, duration)))
            Self.forget(before: end.addingTimeInterval(-window), in: &spent)
        }
    }

    /// `open` run when the allowance admits it (else `ForeignVersion.Refusal.deferred`), its time
    /// counted when it fails: what opens was made with the vault's key and costs nothing here.
    public func whenAdmitted<Opened>(_ open: () throws -> Opened) throws -> Opened {
        guard admits(at: Date()) else { throw ForeignVersion.Refusal.deferred }
        let started = ContinuousClock.now
        do {
            return try open()
        } catch {
            let elapsed = ContinuousClock.now - started
            charge(Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18, endingAt: Date())
            throw error
        }
    }

    /// When an opening may start again, seen at `now` (now, when it may already).
    public func nextRoom(at now: Date) -> Date {
        spent.withLock { spent in
            Self.forget(before: now.addingTimeInterval(-window), in: &spent)
            var total = spent.reduce(0) { $0 + $1.seconds }
            for item in spent {
                guard total >= seconds else { break }
                total -= item.seconds
                if total < seconds { return item.end.addingTimeInterval(window) }
            }
            return now
        }
    }

    private static func forget(before start: Date, in spent: inout [(end: Date, seconds: TimeInterval)]) {
        if let keep = spent.firstIndex(where: { $0.end >= start }) { spent.removeFirst(keep) } else { spent.removeAll() }
    }
}

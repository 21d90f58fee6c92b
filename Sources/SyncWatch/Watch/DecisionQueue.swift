/// The decisions submitted to an engine and not yet taken, oldest first, each with where its answer
/// goes. Not thread-safe: the engine touches it only while its condition is locked.
struct DecisionQueue {
    /// One decision waiting for the loop.
    struct Queued {
        /// Identifies it, for a caller that stops waiting (`withdraw`).
        let id: Int
        /// The vault it is about (resolved path).
        let vault: String
        let decision: Reconciler.Decision
        /// Called once, on the engine's thread (or the caller's, when it is not taken).
        let answer: @Sendable (WatcherDecision.Answer) -> Void
    }

    private var queued: [Queued] = []
    private var lastID = 0

    /// Queues `decision` about `vault`; its id.
    mutating func add(_ decision: Reconciler.Decision, vault: String, answer: @escaping @Sendable (WatcherDecision.Answer) -> Void) -> Int {
        lastID += 1
        queued.append(Queued(id: lastID, vault: vault, decision: decision, answer: answer))
        return lastID
    }

    /// Whether a decision about `vault` waits.
    func waits(for vault: String) -> Bool { queued.contains { $0.vault == vault } }

    /// The oldest decision about `vault`, taken off the queue.
    mutating func take(for vault: String) -> Queued? {
        guard let index = queued.firstIndex(where: { $0.vault == vault }) else { return nil }
        return queued.remove(at: index)
    }

    /// Puts `decision` back first (its check must be done again: a transfer into the folder).
    mutating func putBack(_ decision: Queued) { queued.insert(decision, at: 0) }

    /// Takes the decision `id` off the queue; false when it was taken already.
    mutating func withdraw(_ id: Int) -> Bool {
        guard let index = queued.firstIndex(where: { $0.id == id }) else { return false }
        queued.remove(at: index)
        return true
    }

    /// Every decision (about `vault`, or all), taken off the queue.
    mutating func takeAll(for vault: String? = nil) -> [Queued] {
        let taken = queued.filter { vault == nil || $0.vault == vault }
        queued.removeAll { vault == nil || $0.vault == vault }
        return taken
    }
}

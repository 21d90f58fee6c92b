internal import Dispatch
internal import Synchronization

/// A bounded first-in first-out channel of chunks between one producer thread and one consumer.
///
/// The state is behind a `Mutex` (one lock per chunk, never per byte). A side that must wait marks
/// itself waiting under the lock, then sleeps on its own semaphore; the other side clears the mark
/// under the lock and signals once, so no wake-up is lost and none is left over.
///
/// A waiting side is woken in batches: the producer once the consumer has drained the channel to
/// half, the consumer once half of it is filled (or it is closed). Each wake-up is a few
/// microseconds of scheduling on both threads; waking at every chunk made a read of a 10,000-entry
/// vault trade thousands of them between threads that then ran in lockstep.
final class ChunkChannel<Chunk: Sendable>: Sendable {
    private struct State {
        var chunks: [Chunk] = []
        var closed = false
        var cancelled = false
        var producerFinished = false
        var error: KDBXError?
        var producerWaiting = false
        var consumerWaiting = false

        /// Whether the consumer was waiting (it must be signalled), clearing the mark.
        mutating func wakeConsumer() -> Bool {
            defer { consumerWaiting = false }
            return consumerWaiting
        }

        /// Whether the producer was waiting (it must be signalled), clearing the mark.
        mutating func wakeProducer() -> Bool {
            defer { producerWaiting = false }
            return producerWaiting
        }
    }

    private let state = Mutex(State())
    private let capacity: Int
    /// A waiting producer is woken when no more than this many chunks are queued.
    private let producerWakeLevel: Int
    /// A waiting consumer is woken when at least this many chunks are queued.
    private let consumerWakeLevel: Int
    /// The producer sleeps here (only in `put`).
    private let producerWake = DispatchSemaphore(value: 0)
    /// The consumer sleeps here (`take`, `cancel`, `waitForProducerError`: one thread, one at a time).
    private let consumerWake = DispatchSemaphore(value: 0)

    init(capacity: Int) {
        precondition(capacity >= 1, "a channel holds at least one chunk")
        self.capacity = capacity
        producerWakeLevel = capacity / 2
        consumerWakeLevel = max(1, (capacity + 1) / 2)
    }

    /// Adds a chunk, waiting while the channel is full; false once the consumer has gone.
    func put(_ chunk: Chunk) -> Bool {
        while true {
            let (added, refused, wake) = state.withLock { state -> (Bool, Bool, Bool) in
                if state.cancelled { return (false, true, false) }
                guard state.chunks.count < capacity else {
                    state.producerWaiting = true
                    return (false, false, false)
                }
                state.chunks.append(chunk)
                return (true, false, state.chunks.count >= consumerWakeLevel && state.wakeConsumer())
            }
            if wake { consumerWake.signal() }
            if added { return true }
            if refused { return false }
            producerWake.wait()
        }
    }

    /// The producer has no more chunks (the consumer drains what is queued, then sees the end).
    func closeInput() {
        let wake = state.withLock { state in
            state.closed = true
            return state.wakeConsumer()
        }
        if wake { consumerWake.signal() }
    }

    /// Marks the end of the chunks (with the producer's error, if any).
    func close(with error: KDBXError?) {
        let wake = state.withLock { state in
            state.error = error
            state.closed = true
            state.producerFinished = true
            return state.wakeConsumer()
        }
        if wake { consumerWake.signal() }
    }

    /// The next chunk, or nil at the end.
    func take() -> Chunk? {
        while true {
            let (chunk, ended, wake) = state.withLock { state -> (Chunk?, Bool, Bool) in
                if !state.chunks.isEmpty {
                    let chunk = state.chunks.removeFirst()
                    return (chunk, false, state.chunks.count <= producerWakeLevel && state.wakeProducer())
                }
                if state.closed { return (nil, true, false) }
                state.consumerWaiting = true
                return (nil, false, false)
            }
            if wake { producerWake.signal() }
            if let chunk { return chunk }
            if ended { return nil }
            consumerWake.wait()
        }
    }

    /// The consumer stops early: wake the producer, then wait until it has finished.
    func cancel() {
        let wake = state.withLock { state in
            state.cancelled = true
            return state.wakeProducer()
        }
        if wake { producerWake.signal() }
        _ = waitUntilProducerFinished()
    }

    /// The producer's error, after it has finished. Only after `take` returned nil (or after
    /// `cancel`): a consumer that stopped taking while chunks wait would leave the producer waiting
    /// on a full channel for good.
    func waitForProducerError() -> KDBXError? {
        waitUntilProducerFinished()
    }

    /// Waits (on the consumer's thread) until the producer has called `close(with:)`; its error.
    private func waitUntilProducerFinished() -> KDBXError? {
        while true {
            let (finished, error) = state.withLock { state -> (Bool, KDBXError?) in
                if state.producerFinished { return (true, state.error) }
                state.consumerWaiting = true
                return (false, nil)
            }
            if finished { return error }
            consumerWake.wait()
        }
    }
}

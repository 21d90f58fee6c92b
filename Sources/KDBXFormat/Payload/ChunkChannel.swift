internal import Foundation

/// A bounded first-in first-out channel of chunks between one producer thread and one consumer.
final class ChunkChannel<Chunk>: @unchecked Sendable {
    private let condition = NSCondition()
    private var chunks: [Chunk] = []
    private let capacity: Int
    private var closed = false
    private var cancelled = false
    private var producerFinished = false
    private var error: KDBXError?

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// Adds a chunk, waiting while the channel is full; false once the consumer has gone.
    func put(_ chunk: Chunk) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while chunks.count >= capacity && !cancelled { condition.wait() }
        guard !cancelled else { return false }
        chunks.append(chunk)
        condition.broadcast()
        return true
    }

    /// The producer has no more chunks (the consumer drains what is queued, then sees the end).
    func closeInput() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }

    /// Marks the end of the chunks (with the producer's error, if any).
    func close(with error: KDBXError?) {
        condition.lock()
        self.error = error
        closed = true
        producerFinished = true
        condition.broadcast()
        condition.unlock()
    }

    /// The next chunk, or nil at the end.
    func take() -> Chunk? {
        condition.lock()
        defer { condition.unlock() }
        while chunks.isEmpty && !closed { condition.wait() }
        guard !chunks.isEmpty else { return nil }
        let chunk = chunks.removeFirst()
        condition.broadcast()
        return chunk
    }

    /// The consumer stops early: wake the producer, then wait until it has finished.
    func cancel() {
        condition.lock()
        cancelled = true
        condition.broadcast()
        while !producerFinished { condition.wait() }
        condition.unlock()
    }

    /// The producer's error, after it has finished.
    func waitForProducerError() -> KDBXError? {
        condition.lock()
        defer { condition.unlock() }
        while !producerFinished { condition.wait() }
        return error
    }
}

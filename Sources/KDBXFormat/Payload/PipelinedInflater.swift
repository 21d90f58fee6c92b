internal import Foundation

/// Decompresses on a second thread while the caller parses: a small bounded channel of chunks
/// between the two, so the two cores work at once and memory stays at a few chunks.
enum PipelinedInflater {
    /// Inflates `compressed` on a helper thread and calls `consume` on the calling thread with each
    /// decompressed chunk, in order. Errors from either side are rethrown; the helper always finishes.
    static func decompress(
        _ compressed: Data, limit: Int, consume: (Data) throws(KDBXError) -> Void
    ) throws(KDBXError) {
        let channel = ChunkChannel(capacity: 4)
        let producer = Thread {
            do {
                try Gzip.decompress(compressed, limit: limit) { chunk throws(KDBXError) in
                    guard channel.put(Data(chunk)) else { throw .corrupt("reader stopped") }
                }
                channel.close(with: nil)
            } catch let error as KDBXError {
                channel.close(with: error)
            } catch {
                channel.close(with: .corrupt("gzip: \(error)"))
            }
        }
        producer.stackSize = 1 << 20
        producer.start()
        defer { channel.cancel() }
        while let chunk = channel.take() {
            try consume(chunk)
        }
        if let error = channel.waitForProducerError() { throw error }
    }
}

/// A bounded first-in first-out channel of chunks between one producer and one consumer.
final class ChunkChannel: @unchecked Sendable {
    private let condition = NSCondition()
    private var chunks: [Data] = []
    private let capacity: Int
    private var closed = false
    private var cancelled = false
    private var producerFinished = false
    private var error: KDBXError?

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// Adds a chunk, waiting while the channel is full; false once the consumer has gone.
    func put(_ chunk: Data) -> Bool {
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
    func take() -> Data? {
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

import Foundation
@testable import KDBXFormat
import Testing
import TestSupport

/// The channel between a read's threads wakes a waiting side in batches (the producer once half the
/// channel is drained, the consumer once half of it is filled or it is closed): no chunk may be lost,
/// reordered or left waiting, whatever the capacity and however the two threads' speeds alternate.
@Suite("the chunk channel hands over every chunk in order, its wake-ups batched")
struct ChunkChannelTests {
    /// How long a case may take before it counts as stuck (a lost wake-up never ends).
    private static let stuckAfter: TimeInterval = 20

    @Test("generated producer and consumer speeds: every chunk arrives, in order, then the end and the error",
          arguments: 0..<40)
    func everyChunkInOrder(seed: Int) throws {
        var generator = SeededRandom(seed: 0xC4A_0000 + UInt64(seed))
        let capacity = Int.random(in: 1...9, using: &generator)
        let count = Int.random(in: 0...400, using: &generator)
        let failsAtEnd = Bool.random(using: &generator)
        // Each side pauses (yields the core, or sleeps a few microseconds) on its own random steps.
        let producerPauses = (0..<count).map { _ in Int.random(in: 0..<6, using: &generator) }
        let consumerPauses = (0...count).map { _ in Int.random(in: 0..<6, using: &generator) }
        let channel = ChunkChannel<[UInt8]>(capacity: capacity)
        let finished = DispatchSemaphore(value: 0)
        let producer = Thread {
            for index in 0..<count {
                Self.pause(producerPauses[index])
                _ = channel.put([UInt8(truncatingIfNeeded: index), UInt8(truncatingIfNeeded: index >> 8)])
            }
            channel.close(with: failsAtEnd ? .corrupt("generated failure") : nil)
            finished.signal()
        }
        producer.start()
        // The consumer on a thread of its own too: a lost wake-up then fails the case instead of hanging the suite.
        let outcome = Outcome()
        let consumer = Thread {
            var step = 0
            while let chunk = channel.take() {
                outcome.received.append(Int(chunk[0]) | Int(chunk[1]) << 8)
                Self.pause(consumerPauses[step % consumerPauses.count])
                step += 1
            }
            outcome.error = channel.waitForProducerError()
            outcome.done.signal()
        }
        consumer.start()
        #expect(outcome.done.wait(timeout: .now() + Self.stuckAfter) == .success, "seed \(seed): the consumer never saw the end")
        #expect(finished.wait(timeout: .now() + Self.stuckAfter) == .success, "seed \(seed): the producer never finished")
        #expect(outcome.received == Array(0..<count), "seed \(seed), capacity \(capacity)")
        #expect((outcome.error != nil) == failsAtEnd, "seed \(seed)")
    }

    @Test("a consumer that stops early frees a producer waiting on a full channel", arguments: 0..<12)
    func cancelFreesProducer(seed: Int) throws {
        var generator = SeededRandom(seed: 0xC4A_1000 + UInt64(seed))
        let capacity = Int.random(in: 1...9, using: &generator)
        let taken = Int.random(in: 0...20, using: &generator)
        let channel = ChunkChannel<[UInt8]>(capacity: capacity)
        let refused = DispatchSemaphore(value: 0)
        let producer = Thread {
            // Far more than fits: once the consumer has gone, a put is refused.
            for index in 0..<10_000 where !channel.put([UInt8(truncatingIfNeeded: index)]) {
                refused.signal()
                channel.close(with: nil)
                return
            }
            channel.close(with: nil)
        }
        producer.start()
        // Off the test's thread: a producer never released then fails the case instead of hanging the suite.
        let consumer = Thread {
            for _ in 0..<taken { _ = channel.take() }
            channel.cancel()
        }
        consumer.start()
        #expect(refused.wait(timeout: .now() + Self.stuckAfter) == .success, "seed \(seed): the producer was not released")
    }

    /// What the consumer thread saw (read by the test only after `done`).
    private final class Outcome: @unchecked Sendable {
        var received: [Int] = []
        var error: KDBXError?
        let done = DispatchSemaphore(value: 0)
    }

    private static func pause(_ kind: Int) {
        switch kind {
        case 0: sched_yield()
        case 1: usleep(UInt32.random(in: 1...50))
        default: break
        }
    }
}

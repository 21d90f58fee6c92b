internal import Foundation
internal import Synchronization

/// One result slot per piece of work run on all cores (`DispatchQueue.concurrentPerform`), read
/// back in order once the work is done. Each slot is written by one worker; the mutex orders the
/// writes with the reads (one lock per piece of work, not per element).
public final class ParallelSlots<Value: Sendable>: Sendable {
    private let slots: Mutex<[Value?]>

    /// `count` empty slots.
    public init(count: Int) {
        slots = Mutex(Array(repeating: nil, count: count))
    }

    /// Stores the result of piece `index`.
    public func set(_ value: Value, at index: Int) {
        slots.withLock { $0[index] = value }
    }

    /// The result of piece `index` (nil: not set), leaving the slot empty.
    public func take(_ index: Int) -> Value? {
        slots.withLock { slots in
            defer { slots[index] = nil }
            return slots[index]
        }
    }
}

extension RandomAccessCollection where Index == Int, Self: Sendable {
    /// `transform` of every element, in order, computed on all cores in runs of `chunkSize` elements.
    public func parallelMap<Result: Sendable>(chunkSize: Int, _ transform: @Sendable (Element) -> Result) -> [Result] {
        let runs = Swift.stride(from: startIndex, to: endIndex, by: Swift.max(chunkSize, 1)).map { $0..<Swift.min($0 + chunkSize, endIndex) }
        let slots = ParallelSlots<[Result]>(count: runs.count)
        DispatchQueue.concurrentPerform(iterations: runs.count) { run in
            slots.set(runs[run].map { transform(self[$0]) }, at: run)
        }
        var results: [Result] = []
        results.reserveCapacity(count)
        for run in runs.indices { results.append(contentsOf: slots.take(run) ?? []) }
        return results
    }
}

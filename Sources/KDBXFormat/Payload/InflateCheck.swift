internal import Foundation
internal import Synchronization

/// Inflates a gzip payload to its end on a thread of its own, only to check it (igzip checks the
/// CRC-32 and length at the end): a save's proof decrypts and hashes the payload read back on the
/// calling thread meanwhile, and the inflating was two thirds of that proof's time.
final class InflateCheck: Sendable {
    private let pieces = ChunkChannel<[UInt8]>(capacity: 4)
    private let done = DispatchSemaphore(value: 0)
    private let failure = Mutex<KDBXError?>(nil)

    /// Starts the thread; never inflates beyond `limit` bytes.
    init(limit: Int) {
        // The thread holds this check until it has finished (`finish` waits for that); the inflater
        // is made, used and dropped on it.
        let thread = Thread { [self] in
            var firstFailure: KDBXError?
            var inflater: GzipInflater?
            do throws(KDBXError) { inflater = try GzipInflater(chunkSize: 1 << 20, limit: limit) } catch { firstFailure = error }
            // Keeps taking pieces after a failure, so that the producer never blocks on a full channel.
            while let piece = self.pieces.take() {
                guard firstFailure == nil, let inflater else { continue }
                let fed: Result<Void, KDBXError> = piece.withUnsafeBytes { bytes in
                    Result { () throws(KDBXError) in try inflater.feed(bytes) { _ throws(KDBXError) in } }
                }
                if case .failure(let failed) = fed { firstFailure = failed }
            }
            if firstFailure == nil, let inflater {
                do throws(KDBXError) { try inflater.finish() } catch { firstFailure = error }
            }
            self.failure.withLock { $0 = firstFailure }
            self.done.signal()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// Hands over the next piece of the payload.
    func feed(_ piece: UnsafeRawBufferPointer) {
        _ = pieces.put([UInt8](piece))
    }

    /// The payload has ended: waits for the thread and throws if the stream was not intact.
    func finish() throws(KDBXError) {
        pieces.closeInput()
        done.wait()
        if let error = failure.withLock({ $0 }) { throw error }
    }
}

internal import Foundation
internal import MyPassCrypto
internal import Synchronization

/// Compresses on a second thread while the caller writes the document: the writer's small pieces are
/// gathered into 1 MiB chunks and handed over a bounded channel to a `PayloadCompressor`. The result
/// comes with its SHA-256: a save proves with it that the file it wrote decrypts to exactly this
/// payload (`KDBXReader.payloadDigest`). Hashing the compressed bytes costs a fortieth of hashing
/// the document, which sat on this thread, the slower side of a save.
/// Confined to one thread at a time, so its hot state is `@exclusivity(unchecked)`: the runtime's
/// access checks otherwise cost about a fifth of an open and up to half of a save (`mypass-bench open`).
final class PipelinedCompressor {
    private static let chunkSize = 1 << 20
    private let worker: CompressionWorker
    @exclusivity(unchecked) private var pending = Data()

    init(_ compression: PayloadCompression) throws(KDBXError) {
        worker = CompressionWorker(compressor: try PayloadCompressor(compression))
        pending.reserveCapacity(Self.chunkSize)
        let thread = Thread { [worker] in worker.run() }
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// Adds the next piece of the payload.
    func append(_ bytes: UnsafeRawBufferPointer) {
        pending.append(contentsOf: bytes)
        if pending.count >= Self.chunkSize { flush() }
    }

    /// Ends the payload and returns it compressed (in segments, `PayloadCompressor.finish`), with
    /// the SHA-256 of the compressed bytes.
    func finish() throws(KDBXError) -> (compressed: [Data], digest: Data) {
        flush()
        worker.channel.closeInput()
        return try worker.waitForResult()
    }

    private func flush() {
        guard !pending.isEmpty else { return }
        _ = worker.channel.put(pending)
        pending = Data()
        pending.reserveCapacity(Self.chunkSize)
    }

    deinit {
        worker.channel.closeInput()
    }
}

/// The second thread's side: takes chunks until the input closes, compresses them, publishes the result.
/// The compressor sits in a `Mutex` only the worker thread takes (once per 1 MiB chunk, uncontended);
/// the result is set before `done` is signalled and read after waiting for it.
private final class CompressionWorker: Sendable {
    let channel = ChunkChannel<Data>(capacity: 4)
    private let compressor: Mutex<PayloadCompressor>
    private let done = DispatchSemaphore(value: 0)
    private let result = Mutex<Result<(compressed: [Data], digest: Data), KDBXError>>(.failure(.unwritable("compression did not finish")))

    init(compressor: sending PayloadCompressor) {
        self.compressor = Mutex(compressor)
    }

    func run() {
        var failure: KDBXError?
        // Keep taking chunks after a failure, so that the writer never blocks on a full channel.
        while let chunk = channel.take() {
            guard failure == nil else { continue }
            let appended: Result<Void, KDBXError> = compressor.withLock { compressor in
                chunk.withUnsafeBytes { bytes in
                    Result { () throws(KDBXError) in try compressor.append(bytes) }
                }
            }
            if case .failure(let error) = appended { failure = error }
        }
        let outcome: Result<(compressed: [Data], digest: Data), KDBXError>
        if let failure {
            outcome = .failure(failure)
        } else {
            outcome = compressor.withLock { compressor in
                Result { () throws(KDBXError) in
                    let compressed = try compressor.finish()
                    var hasher = SHA2Hasher(.sha256)
                    for segment in compressed { hasher.update(segment) }
                    return (compressed, hasher.finalize())
                }
            }
        }
        result.withLock { $0 = outcome }
        done.signal()
    }

    /// The result, taken out of the worker: the caller then holds the only reference to the
    /// compressed payload, which the writer encrypts in place (a second reference made it a copy).
    func waitForResult() throws(KDBXError) -> (compressed: [Data], digest: Data) {
        done.wait()
        return try result.withLock { result in
            defer { result = .failure(.unwritable("compression result already taken")) }
            return result
        }.get()
    }
}

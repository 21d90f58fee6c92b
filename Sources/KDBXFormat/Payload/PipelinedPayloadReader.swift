internal import Foundation
internal import MyPassCrypto
internal import Synchronization

/// Reads a payload on three threads: the first decrypts and decompresses it (`InflatingStage`), a
/// helper reads the KDBX 4 inner header and parses the XML into recorded events (`XMLEventRecorder`),
/// and the calling thread builds the vault from those events (`VaultDocumentReader`). Parsing and
/// building cost about the same, so two cores share the work (decompression is about a tenth of
/// it); neither the decompressed payload nor the XML is ever held whole (bounded channels sit
/// between the threads).
enum PipelinedPayloadReader {
    /// What the payload holds before its XML.
    enum Layout {
        /// KDBX 4: the inner header (inner stream and attachments), then the XML.
        case kdbx4
        /// KDBX 3.1: only the XML; protected values are masked with `innerStream`.
        case kdbx3(innerStream: StreamCipher?)
    }

    /// The document in `payload` (gzip-compressed or not), never decompressing beyond `limit` bytes.
    static func read(_ payload: Data, compression: PayloadCompression, layout: Layout, limit: Int) throws(KDBXError) -> DecodedDocument {
        try read(.whole(payload), compression: compression, layout: layout, limit: limit)
    }

    /// The document `source` produces, read on the helper thread as it is produced; versions equal
    /// to one of `donor`'s take its storage.
    static func read(
        _ source: PayloadSource, compression: PayloadCompression, layout: Layout, limit: Int, donor: EntryStorageDonor? = nil
    ) throws(KDBXError) -> DecodedDocument {
        let channel = ChunkChannel<[UInt8]>(capacity: 4)
        let parsing = PayloadParsing(readsInnerHeader: { if case .kdbx4 = layout { true } else { false } }(), channel: channel)
        // The helper drops its reference to the payload (and its parser: `PayloadParsing.run` keeps it
        // in the call) before it signals `done`, and this thread waits for that: nothing of this read
        // outlives it, even when it ends in an error (a Thread releases its closure whenever it gets
        // round to it).
        let handOver = PayloadHandOver(source)
        let done = DispatchSemaphore(value: 0)
        let helper = Thread {
            if let payload = handOver.take() { parsing.run(payload, compression: compression, limit: limit) }
            done.signal()
        }
        helper.stackSize = 4 << 20
        helper.start()
        defer {
            channel.cancel()
            done.wait()
            // The attachments of the inner header leave with this call, not whenever the thread
            // object lets go of its closure (a hostile file that fails half-way otherwise leaves them).
            parsing.dropInnerHeader()
        }
        var reader: VaultDocumentReader?
        while let chunk = channel.take() {
            let current: VaultDocumentReader
            if let reader { current = reader } else { current = try makeReader(layout, innerHeader: parsing.innerHeader, donor: donor) }
            reader = current
            try RecordedEvent.replay(chunk, into: current)
        }
        if let error = channel.waitForProducerError() { throw error }
        guard let reader else { throw .corrupt("XML: empty document") }
        return try reader.finish()
    }

    private static func makeReader(_ layout: Layout, innerHeader: InnerHeader?, donor: EntryStorageDonor?) throws(KDBXError) -> VaultDocumentReader {
        switch layout {
        case .kdbx3(let innerStream):
            return VaultDocumentReader(innerStream: innerStream, binaries: [], donor: donor)
        case .kdbx4:
            guard let innerHeader else { throw .truncated("inner header") }
            let stream = try PayloadCrypto.innerStream(innerHeader.streamAlgorithm, key: innerHeader.streamKey)
            return VaultDocumentReader(innerStream: stream, binaries: innerHeader.binaries, donor: donor)
        }
    }
}

/// The payload, handed to the thread that reads it once.
final class PayloadHandOver: Sendable {
    private let payload: Mutex<PayloadSource?>

    init(_ payload: PayloadSource) { self.payload = Mutex(payload) }

    /// The payload; this box keeps no reference to it afterwards.
    func take() -> PayloadSource? {
        payload.withLock { payload in
            defer { payload = nil }
            return payload
        }
    }
}

/// Where the (still compressed) payload comes from: bytes already decrypted, or a KDBX 4 block
/// stream decrypted as it is read.
enum PayloadSource: Sendable {
    case whole(Data)
    case kdbx4Blocks(KDBX4PayloadStream)

    /// Pieces handed on at once from a whole payload.
    private static let pieceSize = 1 << 18

    /// Hands the payload to `consume` in order, in pieces.
    func produce(_ consume: (UnsafeRawBufferPointer) throws(KDBXError) -> Void) throws(KDBXError) {
        switch self {
        case .whole(let payload):
            var offset = payload.startIndex
            while offset < payload.endIndex {
                let end = min(offset + Self.pieceSize, payload.endIndex)
                let result: Result<Void, KDBXError> = payload[offset..<end].withUnsafeBytes { piece in
                    Result { () throws(KDBXError) in try consume(piece) }
                }
                try result.get()
                offset = end
            }
        case .kdbx4Blocks(let stream):
            try stream.produce(consume)
        }
    }

    /// The payload decompressed as `compression` says, handed to `consume` in pieces of at most
    /// `pieceSize` bytes, never more than `limit` in all.
    func decompressed(
        _ compression: PayloadCompression, pieceSize: Int = 1 << 18, limit: Int,
        _ consume: (UnsafeRawBufferPointer) throws(KDBXError) -> Void
    ) throws(KDBXError) {
        guard compression == .gzip else {
            var total = 0
            try produce { piece throws(KDBXError) in
                total += piece.count
                guard total <= limit else { throw .resourceCapExceeded("decompressed payload exceeds \(limit) bytes") }
                try consume(piece)
            }
            return
        }
        let inflater = try GzipInflater(chunkSize: pieceSize, limit: limit)
        try produce { piece throws(KDBXError) in try inflater.feed(piece, consume: consume) }
        try inflater.finish()
    }
}

/// What the two threads of one read share: the channel of recorded events and the KDBX 4 inner
/// header, set by the helper before it hands over the first chunk.
private final class PayloadParsing: Sendable {
    private let channel: ChunkChannel<[UInt8]>
    private let readsInnerHeader: Bool
    private let parsedInnerHeader = Mutex<InnerHeader?>(nil)

    init(readsInnerHeader: Bool, channel: ChunkChannel<[UInt8]>) {
        self.readsInnerHeader = readsInnerHeader
        self.channel = channel
    }

    /// The KDBX 4 inner header, once read.
    var innerHeader: InnerHeader? {
        parsedInnerHeader.withLock { $0 }
    }

    /// Forgets the inner header (the consumer's last step, once the helper has finished).
    func dropInnerHeader() {
        parsedInnerHeader.withLock { $0 = nil }
    }

    /// The helper thread's work; the parser, the recorder and any collected bytes live in this call
    /// and are gone when it returns.
    func run(_ payload: PayloadSource, compression: PayloadCompression, limit: Int) {
        PayloadDecoding(readsInnerHeader: readsInnerHeader, channel: channel) { header in
            self.parsedInnerHeader.withLock { $0 = header }
        }.run(payload, compression: compression, limit: limit)
    }
}

/// The helper thread's half: the inner header and the strict XML parse into recorded events, of
/// the document an `InflatingStage` decompresses beside it. Made, used and dropped on the helper
/// thread (not `Sendable`).
private final class PayloadDecoding {
    private let channel: ChunkChannel<[UInt8]>
    private let readsInnerHeader: Bool
    /// Publishes the inner header to the consuming thread.
    private let publishInnerHeader: (InnerHeader) -> Void

    init(readsInnerHeader: Bool, channel: ChunkChannel<[UInt8]>, publishInnerHeader: @escaping (InnerHeader) -> Void) {
        self.readsInnerHeader = readsInnerHeader
        self.channel = channel
        self.publishInnerHeader = publishInnerHeader
    }

    func run(_ payload: PayloadSource, compression: PayloadCompression, limit: Int) {
        // Pieces of 64 KiB, decompressed on a thread of their own; libxml2 pulls them as it reads.
        let inflating = InflatingStage(payload, compression: compression, limit: limit)
        var recorder: XMLEventRecorder?
        var parser: StrictXMLParser?
        do throws(KDBXError) {
            let recording = XMLEventRecorder { [channel] chunk in channel.put(chunk) }
            recorder = recording
            var first = readsInnerHeader ? try innerHeader(from: inflating) : nil
            let pulling = try StrictXMLParser(handler: recording) {
                if let start = first {
                    first = nil
                    return start
                }
                return inflating.next()
            }
            parser = pulling
            try pulling.parseAll()
            try inflating.finish()
            _ = recording.flush()
            channel.close(with: nil)
        } catch {
            // A parse that met the end of its input early: the decompression's error, if any, is the cause.
            var cause = error
            if parser?.reachedEndOfInput == true {
                do throws(KDBXError) { try inflating.finish() } catch { cause = error }
            } else {
                inflating.stop()
            }
            // The events before the error first, so the consumer reports problems in document order.
            _ = recorder?.flush()
            channel.close(with: cause)
        }
    }

    /// KDBX 4: reads the inner header from the first pieces and publishes it; the rest of the last
    /// piece read is the start of the XML.
    private func innerHeader(from inflating: InflatingStage) throws(KDBXError) -> [UInt8] {
        var collected = Data()
        while true {
            guard let piece = inflating.next() else {
                try inflating.finish()
                throw .truncated("inner header")
            }
            collected.append(contentsOf: piece)
            guard let end = try InnerHeader.length(of: collected) else { continue }
            let (inner, xmlStart) = try InnerHeader.parse(collected.prefix(end))
            publishInnerHeader(inner)
            return [UInt8](collected[(collected.startIndex + xmlStart)...])
        }
    }
}

package import Foundation
internal import CISAL

/// gzip compression of the KDBX payload (ISA-L's igzip), with a cap on the decompressed size so that a
/// small hostile file cannot expand into all memory.
enum Gzip {
    /// Inflates `data` (one whole gzip stream, `GzipInflater`); throws `.resourceCapExceeded` past
    /// `limit` bytes and `.corrupt` or `.truncated` on bad data.
    static func decompress(_ data: Data, limit: Int) throws(KDBXError) -> Data {
        let inflater = try GzipInflater(chunkSize: 1 << 20, limit: limit)
        var output = Data()
        var failure: KDBXError?
        data.withUnsafeBytes { input in
            do throws(KDBXError) {
                try inflater.feed(input) { piece throws(KDBXError) in output.append(contentsOf: piece) }
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        try inflater.finish()
        return output
    }

    /// Deflates `data` into one gzip stream, as a save deflates its payload (`PayloadCompressor`).
    static func compress(_ data: Data) throws(KDBXError) -> Data {
        let compressor = try PayloadCompressor(.gzip)
        var failure: KDBXError?
        data.withUnsafeBytes { bytes in
            do throws(KDBXError) { try compressor.append(bytes) } catch { failure = error }
        }
        if let failure { throw failure }
        return try compressor.finish().reduce(into: Data()) { $0.append($1) }
    }
}

/// The save's deflate for benchmarks (`mypass-bench deflate`): the size `data` deflates to.
package func deflatedSize(of data: Data) throws(KDBXError) -> Int {
    try Gzip.compress(data).count
}

/// Compresses a payload that arrives in pieces (the XML document as it is written) into one gzip
/// stream, or collects it unchanged when compression is off.
///
/// The deflate is ISA-L's igzip at its level 1: on the 10,000-entry benchmark payload (69 MB) it
/// takes 16 ms where zlib's level 5 took 161 ms, for 17% more (4,171 KB against 3,557 KB), still less
/// than the 4,236 KB KeePassXC writes for the same vault (docs/benchmarks.md, the `deflate` rows of
/// `scripts/bench`). The deflate was most of a save and of a watch reaction. Readers inflate it as
/// any gzip stream.
/// Confined to one thread at a time, so its hot state is `@exclusivity(unchecked)`: the runtime's
/// access checks otherwise cost about a fifth of an open and up to half of a save (`mypass-bench open`).
final class PayloadCompressor {
    @exclusivity(unchecked) private var stream = isal_zstream()
    /// igzip's working memory for its level (hash table and tokens), owned here.
    private let levelBuffer: UnsafeMutableRawBufferPointer?
    @exclusivity(unchecked) private var output = SegmentedBytes(segmentSize: HMACBlockStream.writeBlockSize)
    @exclusivity(unchecked) private var scratch = [UInt8](repeating: 0, count: 256 * 1024)

    /// The most a single call hands igzip. Its Huffman tables then follow the text more closely: a
    /// 10,000-entry payload deflated to 4.16 MB in pieces of 256 KiB, to 4.26 MB in pieces of 1 MiB.
    private static let largestPiece = 256 * 1024

    /// A compressor for `compression`.
    init(_ compression: PayloadCompression) throws(KDBXError) {
        guard compression == .gzip else {
            levelBuffer = nil
            return
        }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Int(mypass_isal_level1_buffer_size()), alignment: 64)
        levelBuffer = buffer
        isal_deflate_init(&stream)
        stream.level = 1
        stream.level_buf = buffer.baseAddress?.assumingMemoryBound(to: UInt8.self)
        stream.level_buf_size = UInt32(buffer.count)
        stream.gzip_flag = UInt16(IGZIP_GZIP)
    }

    deinit {
        levelBuffer?.deallocate()
    }

    /// Adds the next piece of the payload.
    func append(_ bytes: UnsafeRawBufferPointer) throws(KDBXError) {
        guard levelBuffer != nil else {
            output.append(bytes)
            return
        }
        var rest = bytes[...]
        while !rest.isEmpty {
            let piece = rest.prefix(Self.largestPiece)
            try run(UnsafeRawBufferPointer(rebasing: piece), last: false)
            rest = rest.dropFirst(piece.count)
        }
    }

    /// Ends the stream and returns the compressed (or collected) payload, in segments of the
    /// writer's HMAC block size.
    func finish() throws(KDBXError) -> [Data] {
        if levelBuffer != nil { try run(UnsafeRawBufferPointer(start: nil, count: 0), last: true) }
        return output.finish()
    }

    /// Deflates `bytes` (all of them), and with `last` ends the stream: the final block and gzip's
    /// CRC-32 and length.
    private func run(_ bytes: UnsafeRawBufferPointer, last: Bool) throws(KDBXError) {
        stream.next_in = UnsafeMutablePointer(mutating: bytes.bindMemory(to: UInt8.self).baseAddress)
        stream.avail_in = UInt32(bytes.count)
        stream.end_of_stream = last ? 1 : 0
        repeat {
            let capacity = scratch.count
            let status = scratch.withUnsafeMutableBytes { buffer -> Int32 in
                stream.next_out = buffer.bindMemory(to: UInt8.self).baseAddress
                stream.avail_out = UInt32(capacity)
                let result = isal_deflate(&stream)
                output.append(UnsafeRawBufferPointer(rebasing: buffer[0..<(capacity - Int(stream.avail_out))]))
                return result
            }
            guard status == COMP_OK else { throw .unwritable("gzip: deflate failed (\(status))") }
        } while stream.avail_in > 0 || stream.avail_out == 0 || (last && stream.internal_state.state != ZSTATE_END)
    }
}

/// Bytes gathered in segments of one size, each allocated once at that size: one growing buffer
/// was copied at each growth, the old copy and the new one held at once (at 100,000 entries, 32 and
/// 40 MB), and a writer then encrypts and frames the segments one by one.
struct SegmentedBytes {
    let segmentSize: Int
    private var segments: [Data] = []
    private var current = Data()

    init(segmentSize: Int) {
        self.segmentSize = segmentSize
    }

    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        var rest = bytes[...]
        while !rest.isEmpty {
            if current.isEmpty { current.reserveCapacity(segmentSize) }
            let take = min(segmentSize - current.count, rest.count)
            current.append(contentsOf: UnsafeRawBufferPointer(rebasing: rest.prefix(take)))
            rest = rest.dropFirst(take)
            if current.count == segmentSize {
                segments.append(current)
                current = Data()
            }
        }
    }

    /// The segments (every one full but the last, which may be empty when there are none), leaving this empty.
    mutating func finish() -> [Data] {
        if !current.isEmpty || segments.isEmpty { segments.append(current) }
        defer { segments = []; current = Data() }
        return segments
    }
}

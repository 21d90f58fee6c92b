internal import Foundation
internal import CZlib

/// gzip compression of the KDBX payload (zlib), with a cap on the decompressed size so that a
/// small hostile file cannot expand into all memory.
enum Gzip {
    /// zlib's window bits plus 16: gzip framing.
    private static let gzipWindowBits: Int32 = 15 + 16

    /// Inflates `data`; throws `.resourceCapExceeded` past `limit` bytes and `.corrupt` on bad data.
    static func decompress(_ data: Data, limit: Int) throws(KDBXError) -> Data {
        var stream = z_stream()
        guard inflateInit2_(&stream, gzipWindowBits, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw .corrupt("gzip: zlib could not start")
        }
        defer { inflateEnd(&stream) }
        // Start with a guess of 4x, grow geometrically, never past the limit.
        var output = Data(count: min(max(data.count * 4, 64 * 1024), limit))
        var produced = 0
        var status: Int32 = Z_OK
        var failure: KDBXError?
        data.withUnsafeBytes { (input: UnsafeRawBufferPointer) in
            stream.next_in = UnsafeMutablePointer(mutating: input.bindMemory(to: Bytef.self).baseAddress)
            stream.avail_in = uInt(input.count)
            while true {
                if produced == output.count {
                    guard output.count < limit else {
                        failure = .resourceCapExceeded("decompressed payload exceeds \(limit) bytes")
                        return
                    }
                    output.count = min(output.count * 2, limit)
                }
                let capacity = output.count - produced
                status = output.withUnsafeMutableBytes { (buffer: UnsafeMutableRawBufferPointer) -> Int32 in
                    stream.next_out = buffer.bindMemory(to: Bytef.self).baseAddress! + produced
                    stream.avail_out = uInt(capacity)
                    let result = inflate(&stream, Z_NO_FLUSH)
                    produced += capacity - Int(stream.avail_out)
                    return result
                }
                if status == Z_STREAM_END { return }
                if status == Z_BUF_ERROR && stream.avail_in == 0 {
                    failure = .truncated("gzip stream")
                    return
                }
                if status != Z_OK && status != Z_BUF_ERROR {
                    failure = .corrupt("gzip: \(stream.msg.map { String(cString: $0) } ?? "inflate error \(status)")")
                    return
                }
            }
        }
        if let failure { throw failure }
        guard stream.avail_in == 0 else { throw .corrupt("gzip: bytes after the end of the stream") }
        output.count = produced
        return output
    }

    /// Deflates `data` into a gzip stream at `level` (1 fastest ... 9 smallest; KeePass uses 6).
    static func compress(_ data: Data, level: Int32 = 6) throws(KDBXError) -> Data {
        var stream = z_stream()
        guard deflateInit2_(&stream, level, Z_DEFLATED, gzipWindowBits, 8, Z_DEFAULT_STRATEGY,
                            ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw .unwritable("gzip: zlib could not start")
        }
        defer { deflateEnd(&stream) }
        var output = Data(count: Int(deflateBound(&stream, uLong(data.count))) + 64)
        var status: Int32 = Z_OK
        data.withUnsafeBytes { (input: UnsafeRawBufferPointer) in
            stream.next_in = UnsafeMutablePointer(mutating: input.bindMemory(to: Bytef.self).baseAddress)
            stream.avail_in = uInt(input.count)
            let capacity = output.count
            status = output.withUnsafeMutableBytes { (buffer: UnsafeMutableRawBufferPointer) -> Int32 in
                stream.next_out = buffer.bindMemory(to: Bytef.self).baseAddress!
                stream.avail_out = uInt(capacity)
                return deflate(&stream, Z_FINISH)
            }
        }
        guard status == Z_STREAM_END else { throw .unwritable("gzip: deflate failed (\(status))") }
        output.count = Int(stream.total_out)
        return output
    }
}

/// Compresses a payload that arrives in pieces (the XML document as it is written) into one gzip
/// stream, or collects it unchanged when compression is off.
/// Confined to one thread at a time, so its hot state is `@exclusivity(unchecked)`: the runtime's
/// access checks otherwise cost about a fifth of an open and up to half of a save (`mypass-bench open`).
final class PayloadCompressor {
    @exclusivity(unchecked) private var stream = z_stream()
    private let compressing: Bool
    @exclusivity(unchecked) private var output = SegmentedBytes(segmentSize: HMACBlockStream.writeBlockSize)
    @exclusivity(unchecked) private var scratch = [UInt8](repeating: 0, count: 256 * 1024)

    /// The zlib level of a save's payload. KeePass uses the default, 6; level 5 deflates our compact
    /// document in about two thirds of the time into the same size (the 1,000- and 10,000-entry
    /// benchmark payloads: +0.0%), at +0.7 to +3.8% on XML of more varied text (scripts/bench's
    /// deflate figures, docs/benchmarks.md). The deflate is most of a watch reaction's save.
    static let payloadLevel: Int32 = 5

    /// A compressor for `compression` at zlib `level`.
    init(_ compression: PayloadCompression, level: Int32 = PayloadCompressor.payloadLevel) throws(KDBXError) {
        compressing = compression == .gzip
        if compressing {
            guard deflateInit2_(&stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY,
                                ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
                throw .unwritable("gzip: zlib could not start")
            }
        }
    }

    deinit {
        if compressing { deflateEnd(&stream) }
    }

    /// Adds the next piece of the payload.
    func append(_ bytes: UnsafeRawBufferPointer) throws(KDBXError) {
        guard compressing else {
            output.append(bytes)
            return
        }
        try run(bytes, flush: Z_NO_FLUSH)
    }

    /// Ends the stream and returns the compressed (or collected) payload, in segments of the
    /// writer's HMAC block size.
    func finish() throws(KDBXError) -> [Data] {
        if compressing { try run(UnsafeRawBufferPointer(start: nil, count: 0), flush: Z_FINISH) }
        return output.finish()
    }

    private func run(_ bytes: UnsafeRawBufferPointer, flush: Int32) throws(KDBXError) {
        stream.next_in = UnsafeMutablePointer(mutating: bytes.bindMemory(to: Bytef.self).baseAddress)
        stream.avail_in = uInt(bytes.count)
        var status: Int32 = Z_OK
        repeat {
            let capacity = scratch.count
            status = scratch.withUnsafeMutableBytes { buffer -> Int32 in
                stream.next_out = buffer.bindMemory(to: Bytef.self).baseAddress
                stream.avail_out = uInt(capacity)
                let result = deflate(&stream, flush)
                output.append(UnsafeRawBufferPointer(rebasing: buffer[0..<(capacity - Int(stream.avail_out))]))
                return result
            }
            guard status == Z_OK || status == Z_STREAM_END || status == Z_BUF_ERROR else {
                throw .unwritable("gzip: deflate failed (\(status))")
            }
        } while stream.avail_out == 0 || (flush == Z_FINISH && status != Z_STREAM_END)
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

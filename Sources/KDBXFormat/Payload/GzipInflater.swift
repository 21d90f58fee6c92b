internal import Foundation
internal import CZlib

/// gzip decompression of a stream that arrives in pieces (a payload decrypted block by block), with
/// the same cap and checks as `Gzip.decompress`: output handed on in pieces of at most `chunkSize`,
/// never more than `limit` bytes in all, nothing accepted after the end of the gzip stream, and a
/// stream that has not ended when the input does is truncated.
final class GzipInflater {
    private var stream = z_stream()
    private let output: UnsafeMutableRawBufferPointer
    private let chunkSize: Int
    private let limit: Int
    private var total = 0
    private var ended = false

    init(chunkSize: Int, limit: Int) throws(KDBXError) {
        guard inflateInit2_(&stream, 15 + 16, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw .corrupt("gzip: zlib could not start")
        }
        self.chunkSize = chunkSize
        self.limit = limit
        output = .allocate(byteCount: chunkSize, alignment: 16)
    }

    deinit {
        inflateEnd(&stream)
        output.deallocate()
    }

    /// Inflates `input`, handing each piece of output to `consume` as soon as it is ready.
    func feed(_ input: UnsafeRawBufferPointer, consume: (UnsafeRawBufferPointer) throws(KDBXError) -> Void) throws(KDBXError) {
        guard !input.isEmpty else { return }
        guard !ended else { throw .corrupt("gzip: bytes after the end of the stream") }
        stream.next_in = UnsafeMutablePointer(mutating: input.bindMemory(to: Bytef.self).baseAddress)
        stream.avail_in = uInt(input.count)
        while stream.avail_in > 0 || stream.avail_out == 0 {
            stream.next_out = output.bindMemory(to: Bytef.self).baseAddress
            stream.avail_out = uInt(chunkSize)
            let status = inflate(&stream, Z_NO_FLUSH)
            let produced = chunkSize - Int(stream.avail_out)
            total += produced
            guard total <= limit else { throw .resourceCapExceeded("decompressed payload exceeds \(limit) bytes") }
            if produced > 0 { try consume(UnsafeRawBufferPointer(rebasing: output[0..<produced])) }
            switch status {
            case Z_STREAM_END:
                ended = true
                guard stream.avail_in == 0 else { throw .corrupt("gzip: bytes after the end of the stream") }
                return
            case Z_OK:
                continue
            case Z_BUF_ERROR:
                // No progress possible: fine when the input is used up (more arrives with the next piece).
                if stream.avail_in == 0 { return }
                if produced == 0 { throw .corrupt("gzip: inflate made no progress") }
            default:
                throw .corrupt("gzip: \(stream.msg.map { String(cString: $0) } ?? "inflate error \(status)")")
            }
        }
    }

    /// The input has ended: the gzip stream must have ended with it.
    func finish() throws(KDBXError) {
        guard ended else { throw .truncated("gzip stream") }
    }
}

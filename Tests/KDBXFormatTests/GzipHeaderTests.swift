import CISAL
import Foundation
@testable import KDBXFormat
import Testing
import TestSupport

/// The gzip header of a payload is read across the pieces it arrives in (a file's writer chooses
/// how its payload is cut into blocks): every optional field (extra, name, comment, header CRC) read
/// whole whatever the cut, a wrong header CRC and reserved flag bits refused, as RFC 1952 asks.
@Suite("gzip headers cut anywhere read as whole ones; a wrong header CRC or reserved flags are refused")
struct GzipHeaderTests {
    static let document = Data((0..<200_000).map { UInt8(truncatingIfNeeded: ($0 &* 7) % 61 + 32) })

    @Test("every optional field, the header cut at every place and the stream fed in pieces of every size up to 90 bytes")
    func everyCut() throws {
        let stream = try Self.stream(flags: Self.allOptionalFields)
        let headerLength = stream.count - (try Self.body().count)
        for cut in 1..<(headerLength + 4) {
            #expect(try Self.inflate(stream, pieces: [cut, stream.count]) == Self.document, "cut at \(cut)")
        }
        for size in 1...90 {
            #expect(try Self.inflate(stream, pieces: Array(repeating: size, count: stream.count / size + 1)) == Self.document, "pieces of \(size)")
        }
    }

    @Test("a wrong header CRC is refused, whole or cut")
    func wrongHeaderCRC() throws {
        var stream = try Self.stream(flags: Self.allOptionalFields)
        let crcAt = stream.count - (try Self.body().count) - 2
        stream[crcAt] ^= 1
        for pieces in [[stream.count], [crcAt, stream.count], Array(repeating: 3, count: stream.count / 3 + 1)] {
            #expect(throws: KDBXError.self) { try Self.inflate(stream, pieces: pieces) }
        }
    }

    @Test("reserved flag bits are refused", arguments: [UInt8(0x20), 0x40, 0x80])
    func reservedFlags(bit: UInt8) throws {
        let stream = try Self.stream(flags: bit)
        for pieces in [[stream.count], [3, stream.count], [4, stream.count]] {
            #expect(throws: KDBXError.corrupt("gzip: reserved header flags are set")) { try Self.inflate(stream, pieces: pieces) }
        }
    }

    // MARK: Helpers

    /// FHCRC, FEXTRA, FNAME and FCOMMENT.
    static let allOptionalFields: UInt8 = 0x02 | 0x04 | 0x08 | 0x10

    /// The deflate data and trailer of `document`: a save's gzip stream without its 10-byte header.
    static func body() throws -> Data {
        try Gzip.compress(document).dropFirst(10)
    }

    /// `document` as a gzip stream whose header has `flags` (with the fields they announce).
    static func stream(flags: UInt8) throws -> Data {
        var header: [UInt8] = [0x1F, 0x8B, 8, flags, 1, 2, 3, 4, 0, 3]
        if flags & 0x04 != 0 {
            let extra = [UInt8](repeating: 0x45, count: 37)
            header += [UInt8(extra.count), 0] + extra
        }
        if flags & 0x08 != 0 { header += Array("vault.xml".utf8) + [0] }
        if flags & 0x10 != 0 { header += Array("a comment".utf8) + [0] }
        if flags & 0x02 != 0 {
            let crc = crc32_gzip_refl(0, header, UInt64(header.count))
            header += [UInt8(crc & 0xFF), UInt8(crc >> 8 & 0xFF)]
        }
        return Data(header) + (try body())
    }

    /// `stream` inflated, fed in pieces of the given sizes (the last may run past the end).
    static func inflate(_ stream: Data, pieces: [Int]) throws -> Data {
        let inflater = try GzipInflater(chunkSize: 1 << 16, limit: 1 << 24)
        var output = Data()
        var start = 0
        for size in pieces where start < stream.count {
            let end = min(stream.count, start + size)
            try stream[start..<end].withUnsafeBytes { piece in
                try inflater.feed(piece) { output.append(contentsOf: $0) }
            }
            start = end
        }
        try inflater.finish()
        return output
    }
}

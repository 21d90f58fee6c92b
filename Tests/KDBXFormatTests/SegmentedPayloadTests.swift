import Foundation
@testable import KDBXFormat
import MyPassCrypto
import Testing
import TestSupport

/// A save encrypts and frames its compressed payload segment by segment (`SegmentedBytes`,
/// `PayloadCrypto.SegmentEncryptor`, `HMACBlockStream.BlockWriter`): the bytes must be exactly those
/// of the payload encrypted at once and split into blocks, for every cipher, around every boundary
/// of a cipher block and of a segment, whatever the sizes of the pieces the compressor hands over.
@Suite("a payload written in segments is the payload written at once")
struct SegmentedPayloadTests {
    static let segment = HMACBlockStream.writeBlockSize
    static let lengths = [0, 1, 15, 16, 17, segment - 1, segment, segment + 1, 2 * segment + 33]

    @Test("the same file bytes for every cipher and every length around the boundaries", arguments: PayloadCipher.allCases)
    func sameBytes(cipher: PayloadCipher) throws {
        var generator = SeededRandom(seed: 0x5E6_0000 + UInt64(PayloadCipher.allCases.firstIndex(of: cipher)!))
        for length in Self.lengths {
            let payload = Data((0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) })
            let expected = try Self.atOnce(payload, cipher: cipher)
            // Pieces of random sizes, as a compressor hands them over.
            var pieces: [Range<Int>] = []
            var start = 0
            while start < length {
                let size = Int.random(in: 1...(Self.segment / 3), using: &generator)
                pieces.append(start..<min(length, start + size))
                start += size
            }
            #expect(try Self.inSegments(payload, pieces: pieces, cipher: cipher) == expected, "length \(length)")
        }
    }

    @Test("segments are full but the last, which is never missing")
    func segmentShapes() {
        for length in Self.lengths {
            var bytes = SegmentedBytes(segmentSize: Self.segment)
            Data(count: length).withUnsafeBytes { bytes.append($0) }
            let segments = bytes.finish()
            #expect(segments.reduce(0) { $0 + $1.count } == length)
            #expect(!segments.isEmpty)
            #expect(segments.dropLast().allSatisfy { $0.count == Self.segment })
        }
    }

    static let key = SecureBytes(Data(repeating: 7, count: 32))
    static let hmacKey = SecureBytes(Data(repeating: 3, count: 64))

    static func iv(_ cipher: PayloadCipher) -> Data { Data(repeating: 5, count: cipher == .chaCha20 ? 12 : 16) }

    static func atOnce(_ payload: Data, cipher: PayloadCipher) throws -> Data {
        var whole = payload
        try PayloadCrypto.encrypt(inPlace: &whole, cipher: cipher, key: key, iv: iv(cipher))
        var file = Data()
        HMACBlockStream.write(whole, baseKey: hmacKey, appendingTo: &file)
        return file
    }

    static func inSegments(_ payload: Data, pieces: [Range<Int>], cipher: PayloadCipher) throws -> Data {
        var bytes = SegmentedBytes(segmentSize: segment)
        for piece in pieces { payload[piece].withUnsafeBytes { bytes.append($0) } }
        var segments = bytes.finish()
        let encryptor = try PayloadCrypto.SegmentEncryptor(cipher: cipher, key: key, iv: iv(cipher))
        var blocks = HMACBlockStream.BlockWriter(baseKey: hmacKey)
        var file = Data()
        for position in segments.indices {
            try encryptor.encrypt(inPlace: &segments[position], isLast: position == segments.count - 1)
            blocks.append(segments[position], to: &file)
        }
        blocks.finish(&file)
        return file
    }
}

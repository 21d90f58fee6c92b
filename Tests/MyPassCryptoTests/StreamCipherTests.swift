import Foundation
import MyPassCrypto
import Testing

struct ChaCha20Vector: Decodable, Sendable, CustomTestStringConvertible {
    let name: String
    let key: String
    let nonce: String
    let counter: UInt64
    let plaintext: String
    let ciphertext: String
    var testDescription: String { name }
}

struct Salsa20Vector: Decodable, Sendable, CustomTestStringConvertible {
    struct Segment: Decodable, Sendable {
        let offset: Int
        let keystream: String
    }
    let name: String
    let key: String
    let nonce: String
    let counter: UInt64
    let segments: [Segment]
    var testDescription: String { name }
}

@Suite("ChaCha20 (RFC 8439) and Salsa20 (eSTREAM) streams")
struct StreamCipherTests {
    @Test("ChaCha20 output matches the RFC", arguments: try VectorFile<ChaCha20Vector>.load("chacha20.json"))
    func chaCha20(vector: ChaCha20Vector) throws {
        let stream = try StreamCipher(
            .chaCha20, key: SecureBytes(Hex.decode(vector.key)), nonce: Hex.decode(vector.nonce),
            initialCounter: vector.counter)
        let output = try stream.applied(to: Hex.decode(vector.plaintext))
        #expect(Hex.encode(output) == vector.ciphertext)
    }

    @Test("ChaCha20 read in uneven pieces equals one read", arguments: try VectorFile<ChaCha20Vector>.load("chacha20.json"))
    func chaCha20Incremental(vector: ChaCha20Vector) throws {
        let stream = try StreamCipher(
            .chaCha20, key: SecureBytes(Hex.decode(vector.key)), nonce: Hex.decode(vector.nonce),
            initialCounter: vector.counter)
        let plaintext = try Hex.decode(vector.plaintext)
        var output = Data()
        var offset = 0
        for pieceSize in [1, 0, 3, 64, 5, 70, 130, 1, 63].cycled(until: plaintext.count) {
            let end = min(offset + pieceSize, plaintext.count)
            output.append(try stream.applied(to: plaintext[offset..<end]))
            offset = end
        }
        #expect(Hex.encode(output) == vector.ciphertext)
    }

    @Test("Salsa20 keystream matches eSTREAM at each published offset", arguments: try VectorFile<Salsa20Vector>.load("salsa20.json"))
    func salsa20(vector: Salsa20Vector) throws {
        let stream = try StreamCipher(
            .salsa20, key: SecureBytes(Hex.decode(vector.key)), nonce: Hex.decode(vector.nonce),
            initialCounter: vector.counter)
        // Read the stream incrementally, as the KDBX inner random stream does, skipping the gaps.
        var position = 0
        for segment in vector.segments {
            _ = try stream.keystream(count: segment.offset - position)
            let keystream = try stream.keystream(count: 64)
            #expect(Hex.encode(keystream.unprotectedData()) == segment.keystream)
            position = segment.offset + 64
        }
    }

    @Test("Salsa20 read in uneven pieces equals one read")
    func salsa20Incremental() throws {
        let key = SecureBytes(bytes: Array(0..<32))
        let nonce = Data([0xE8, 0x30, 0x09, 0x4B, 0x97, 0x20, 0x5D, 0x2A])
        let whole = try StreamCipher(.salsa20, key: key, nonce: nonce).keystream(count: 1000).unprotectedData()
        let pieces = try StreamCipher(.salsa20, key: key, nonce: nonce)
        var joined = Data()
        for pieceSize in [7, 57, 64, 1, 200, 3].cycled(until: 1000) {
            joined.append(try pieces.keystream(count: min(pieceSize, 1000 - joined.count)).unprotectedData())
        }
        #expect(joined == whole)
    }

    @Test("encrypting twice with the same stream parameters restores the plaintext", arguments: [StreamCipher.Algorithm.chaCha20, .salsa20])
    func roundTrip(algorithm: StreamCipher.Algorithm) throws {
        let key = try SecureBytes(randomCount: 32)
        let nonce = try RandomBytes.data(count: algorithm.nonceSize)
        var data = Data((0..<777).map { UInt8(truncatingIfNeeded: $0) })
        let original = data
        try StreamCipher(algorithm, key: key, nonce: nonce).apply(to: &data)
        #expect(data != original)
        try StreamCipher(algorithm, key: key, nonce: nonce).apply(to: &data)
        #expect(data == original)
    }

    @Test("wrong key and nonce sizes are refused")
    func badSizes() {
        #expect(throws: CryptoError.invalidKeySize(expected: 32, actual: 16)) {
            try StreamCipher(.chaCha20, key: SecureBytes(count: 16), nonce: Data(count: 12))
        }
        #expect(throws: CryptoError.invalidNonceSize(expected: 12, actual: 8)) {
            try StreamCipher(.chaCha20, key: SecureBytes(count: 32), nonce: Data(count: 8))
        }
        #expect(throws: CryptoError.invalidNonceSize(expected: 8, actual: 12)) {
            try StreamCipher(.salsa20, key: SecureBytes(count: 32), nonce: Data(count: 12))
        }
    }

    @Test("ChaCha20's 32-bit block counter cannot wrap around")
    func counterExhaustion() throws {
        #expect(throws: CryptoError.invalidParameter("initial block counter out of range")) {
            try StreamCipher(.chaCha20, key: SecureBytes(count: 32), nonce: Data(count: 12), initialCounter: 1 << 32)
        }
        let lastBlock = try StreamCipher(.chaCha20, key: SecureBytes(count: 32), nonce: Data(count: 12), initialCounter: (1 << 32) - 1)
        _ = try lastBlock.keystream(count: 64)
        #expect(throws: CryptoError.keystreamExhausted) {
            try lastBlock.keystream(count: 1)
        }
    }
}

extension Array where Element == Int {
    /// The sizes repeated until they add up to at least `total` (plus a final piece to be safe).
    func cycled(until total: Int) -> [Int] {
        var result: [Int] = []
        var sum = 0
        while sum < total {
            for size in self {
                result.append(size)
                sum += size
            }
        }
        return result
    }
}

import Foundation
import MyPassCrypto
import Testing

struct SHA2Vector: Decodable, Sendable, CustomTestStringConvertible {
    let name: String
    let algorithm: String
    let message: String
    let repeatCount: Int
    let digest: String
    var testDescription: String { "\(algorithm): \(name)" }
}

@Suite("SHA-256 and SHA-512 (FIPS 180)")
struct SHA2Tests {
    @Test("one-shot digest matches the published value", arguments: try VectorFile<SHA2Vector>.load("sha2.json"))
    func oneShot(vector: SHA2Vector) throws {
        let message = try Data(repeating: Hex.decode(vector.message), count: vector.repeatCount)
        let digest = vector.algorithm == "sha256" ? SHA256.hash(message) : SHA512.hash(message)
        #expect(Hex.encode(digest) == vector.digest)
    }

    @Test("incremental digest over uneven pieces equals the published value", arguments: try VectorFile<SHA2Vector>.load("sha2.json"))
    func incremental(vector: SHA2Vector) throws {
        let message = try Data(repeating: Hex.decode(vector.message), count: vector.repeatCount)
        var hasher = SHA2Hasher(vector.algorithm == "sha256" ? .sha256 : .sha512)
        var offset = 0
        var pieceSize = 1
        while offset < message.count {
            let end = min(offset + pieceSize, message.count)
            hasher.update(message[offset..<end])
            offset = end
            pieceSize = pieceSize * 3 + 1
        }
        #expect(Hex.encode(hasher.finalize()) == vector.digest)
    }

    @Test("secure digest equals the plain digest")
    func secureDigest() {
        let message = Data("abc".utf8)
        #expect(SHA256.secureHash(message).unprotectedData() == SHA256.hash(message))
        #expect(SHA512.secureHash(message).unprotectedData() == SHA512.hash(message))
        #expect(SHA256.secureHash(message).count == 32)
        #expect(SHA512.secureHash(message).count == 64)
    }
}

extension Data {
    /// `count` copies of `piece` one after another.
    init(repeating piece: Data, count: Int) {
        self.init(capacity: piece.count * count)
        for _ in 0..<count { append(piece) }
    }

    @Test("hexHash is the digest in lowercase hex, whole or its first bytes")
    func hexHash() {
        let abc = Data("abc".utf8)
        #expect(SHA256.hexHash(abc) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256.hexHash(abc, prefix: 12) == "ba7816bf8f01cfea414140de")
        #expect(SHA256.hexHash(Data()) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }
}

import Foundation
import MyPassCrypto
import Testing

struct BlockCipherVector: Decodable, Sendable, CustomTestStringConvertible {
    let name: String
    let mode: String
    let key: String
    let iv: String
    let plaintext: String
    let ciphertext: String
    var testDescription: String { name }
}

/// Each vector file with the cipher it tests.
private let blockCipherCases: [(BlockCipher, BlockCipherVector)] = {
    let aes = (try? VectorFile<BlockCipherVector>.load("aes256.json")) ?? []
    let twofish = (try? VectorFile<BlockCipherVector>.load("twofish.json")) ?? []
    return aes.map { (.aes256, $0) } + twofish.map { (.twofish256, $0) }
}()

@Suite("AES-256 and Twofish (NIST SP 800-38A, Twofish paper)")
struct BlockCipherTests {
    @Test("both vector files are present and non-empty")
    func vectorFilesLoad() throws {
        #expect(try VectorFile<BlockCipherVector>.load("aes256.json").count >= 2)
        #expect(try VectorFile<BlockCipherVector>.load("twofish.json").count >= 6)
    }

    @Test("encryption matches the published ciphertext", arguments: blockCipherCases)
    func encrypts(cipher: BlockCipher, vector: BlockCipherVector) throws {
        let key = try SecureBytes(Hex.decode(vector.key))
        let plaintext = try Hex.decode(vector.plaintext)
        let output: Data
        if vector.mode == "ecb" {
            output = try ECB.encrypt(plaintext, cipher: cipher, key: key)
        } else {
            output = try CBC.encrypt(plaintext, cipher: cipher, key: key, iv: Hex.decode(vector.iv), padding: .none)
        }
        #expect(Hex.encode(output) == vector.ciphertext)
    }

    @Test("decryption recovers the published plaintext", arguments: blockCipherCases)
    func decrypts(cipher: BlockCipher, vector: BlockCipherVector) throws {
        let key = try SecureBytes(Hex.decode(vector.key))
        let ciphertext = try Hex.decode(vector.ciphertext)
        let output: Data
        if vector.mode == "ecb" {
            output = try ECB.decrypt(ciphertext, cipher: cipher, key: key)
        } else {
            output = try CBC.decrypt(ciphertext, cipher: cipher, key: key, iv: Hex.decode(vector.iv), padding: .none)
        }
        #expect(Hex.encode(output) == vector.plaintext)
    }

    @Test("PKCS#7 round trip for every length around block boundaries", arguments: BlockCipher.allCases)
    func paddedRoundTrip(cipher: BlockCipher) throws {
        let key = try SecureBytes(randomCount: 32)
        let iv = try RandomBytes.data(count: 16)
        for length in 0...49 {
            let message = Data((0..<length).map { UInt8(truncatingIfNeeded: $0 &* 7) })
            let encrypted = try CBC.encrypt(message, cipher: cipher, key: key, iv: iv)
            #expect(encrypted.count == (length / 16 + 1) * 16)
            #expect(try CBC.decrypt(encrypted, cipher: cipher, key: key, iv: iv) == message)
        }
    }

    @Test("PKCS#7 adds a whole block to block-aligned input, filled with 0x10")
    func paddingOfAlignedInput() throws {
        let key = SecureBytes(bytes: Array(repeating: 1, count: 32))
        let iv = Data(count: 16)
        let encrypted = try CBC.encrypt(Data(count: 16), cipher: .aes256, key: key, iv: iv)
        let raw = try CBC.decrypt(encrypted, cipher: .aes256, key: key, iv: iv, padding: .none)
        #expect(raw.count == 32)
        #expect(raw.suffix(16).allSatisfy { $0 == 0x10 })
    }

    @Test("wrong key sizes are refused", arguments: [0, 16, 24, 31, 33, 64])
    func badKeySize(size: Int) {
        let key = SecureBytes(count: size)
        #expect(throws: CryptoError.invalidKeySize(expected: 32, actual: size)) {
            try CBC.encrypt(Data(count: 16), cipher: .aes256, key: key, iv: Data(count: 16))
        }
        #expect(throws: CryptoError.invalidKeySize(expected: 32, actual: size)) {
            try ECB.encrypt(Data(count: 16), cipher: .twofish256, key: key)
        }
    }

    @Test("wrong IV sizes are refused", arguments: [0, 8, 15, 17, 32])
    func badIVSize(size: Int) {
        let key = SecureBytes(count: 32)
        #expect(throws: CryptoError.invalidNonceSize(expected: 16, actual: size)) {
            try CBC.encrypt(Data(count: 16), cipher: .aes256, key: key, iv: Data(count: size))
        }
    }

    @Test("ciphertext that is not whole blocks is refused", arguments: [0, 1, 15, 17, 31])
    func badCiphertextLength(length: Int) {
        let key = SecureBytes(count: 32)
        #expect(throws: CryptoError.invalidInputLength(blockSize: 16, actual: length)) {
            try CBC.decrypt(Data(count: length), cipher: .aes256, key: key, iv: Data(count: 16))
        }
    }

    @Test("unpadded modes refuse partial blocks")
    func unpaddedPartialBlock() {
        let key = SecureBytes(count: 32)
        #expect(throws: CryptoError.invalidInputLength(blockSize: 16, actual: 20)) {
            try ECB.encrypt(Data(count: 20), cipher: .aes256, key: key)
        }
        #expect(throws: CryptoError.invalidInputLength(blockSize: 16, actual: 5)) {
            try CBC.encrypt(Data(count: 5), cipher: .twofish256, key: key, iv: Data(count: 16), padding: .none)
        }
    }

    @Test("bad padding is reported, not returned", arguments: [
        Array(repeating: UInt8(0), count: 16),                         // pad length 0
        Array(repeating: UInt8(0), count: 15) + [17],                  // pad length > block
        Array(repeating: UInt8(0), count: 13) + [3, 2, 3],             // inconsistent pad bytes
    ])
    func badPadding(lastBlock: [UInt8]) throws {
        let key = SecureBytes(bytes: Array(repeating: 9, count: 32))
        let iv = Data(count: 16)
        let forged = try CBC.encrypt(Data(lastBlock), cipher: .aes256, key: key, iv: iv, padding: .none)
        #expect(throws: CryptoError.invalidPadding) {
            try CBC.decrypt(forged, cipher: .aes256, key: key, iv: iv)
        }
    }

    @Test("decrypting with the wrong key fails or yields different bytes")
    func wrongKey() throws {
        let key = SecureBytes(bytes: Array(repeating: 1, count: 32))
        let otherKey = SecureBytes(bytes: Array(repeating: 2, count: 32))
        let iv = Data(count: 16)
        let message = Data("a vault payload of some length".utf8)
        let encrypted = try CBC.encrypt(message, cipher: .twofish256, key: key, iv: iv)
        let result = Result { try CBC.decrypt(encrypted, cipher: .twofish256, key: otherKey, iv: iv) }
        if case .success(let decrypted) = result {
            #expect(decrypted != message)
        }
    }

    @Test("CBC decryption in pieces of any length equals decrypting the whole message", arguments: BlockCipher.allCases)
    func piecewiseDecryption(cipher: BlockCipher) throws {
        let key = SecureBytes(Data((0..<32).map { UInt8($0 * 7 & 0xFF) }))
        let iv = Data((0..<16).map { UInt8(255 - $0) })
        let message = Data((0..<4099).map { UInt8(truncatingIfNeeded: $0 * 31 + 5) })
        let ciphertext = try CBC.encrypt(message, cipher: cipher, key: key, iv: iv)
        let whole = try CBC.decrypt(ciphertext, cipher: cipher, key: key, iv: iv, padding: .none)
        // Piece lengths that cut blocks anywhere: 1, 5, 15, 16, 17, 33, ... and the rest.
        for pieceLengths in [[1], [5, 15], [16], [17, 33, 2], [4000], [7, 1, 1, 64, 13]] {
            let decryptor = try CBCDecryptor(cipher: cipher, key: key, iv: iv)
            var output: [UInt8] = []
            var offset = 0, turn = 0
            while offset < ciphertext.count {
                let length = min(pieceLengths[turn % pieceLengths.count], ciphertext.count - offset)
                try ciphertext.subdata(in: offset..<(offset + length)).withUnsafeBytes { try decryptor.decrypt($0, appendingTo: &output) }
                offset += length
                turn += 1
            }
            #expect(!decryptor.endsInsideABlock)
            #expect(Data(output) == whole, "pieces \(pieceLengths)")
        }
        // A message that stops inside a block says so.
        let decryptor = try CBCDecryptor(cipher: cipher, key: key, iv: iv)
        var output: [UInt8] = []
        try ciphertext.prefix(40).withUnsafeBytes { try decryptor.decrypt($0, appendingTo: &output) }
        #expect(decryptor.endsInsideABlock && output.count == 32)
    }
}

import Foundation
import MyPassCrypto
import Testing

struct Argon2Vector: Decodable, Sendable, CustomTestStringConvertible {
    let name: String
    let variant: String
    let version: UInt32
    let iterations: UInt32
    let memoryKiB: UInt32
    let parallelism: UInt32
    let password: String
    let salt: String
    let secret: String
    let associatedData: String
    let tag: String
    var testDescription: String { name }

    func parameters() throws -> Argon2.Parameters {
        let secretBytes = try Hex.decode(secret)
        let adBytes = try Hex.decode(associatedData)
        return Argon2.Parameters(
            variant: variant == "argon2d" ? .argon2d : .argon2id, version: version,
            iterations: iterations, memoryKiB: memoryKiB, parallelism: parallelism,
            salt: try Hex.decode(salt),
            secret: secretBytes.isEmpty ? nil : SecureBytes(secretBytes),
            associatedData: adBytes.isEmpty ? nil : adBytes,
            outputLength: tag.count / 2)
    }
}

struct AESKDFVector: Decodable, Sendable, CustomTestStringConvertible {
    let name: String
    let compositeKey: String
    let seed: String
    let rounds: UInt64
    let transformedKey: String
    var testDescription: String { name }
}

@Suite("Argon2 (RFC 9106) and AES-KDF")
struct KeyDerivationTests {
    @Test("Argon2 tag matches the published value", arguments: try VectorFile<Argon2Vector>.load("argon2.json"))
    func argon2(vector: Argon2Vector) throws {
        let tag = try Argon2.deriveKey(password: SecureBytes(Hex.decode(vector.password)), parameters: vector.parameters())
        #expect(Hex.encode(tag.unprotectedData()) == vector.tag)
    }

    /// One impossible Argon2 setting each.
    enum ImpossibleArgon2: String, CaseIterable, Sendable {
        case zeroIterations, zeroParallelism, parallelismTwoToThe24, memoryBelowEightKiBPerLane
        case sevenByteSalt, unknownVersion, threeByteOutput

        func apply(to parameters: inout Argon2.Parameters) {
            switch self {
            case .zeroIterations: parameters.iterations = 0
            case .zeroParallelism: parameters.parallelism = 0
            case .parallelismTwoToThe24: parameters.parallelism = 1 << 24
            case .memoryBelowEightKiBPerLane: parameters.memoryKiB = 31; parameters.parallelism = 4
            case .sevenByteSalt: parameters.salt = Data(count: 7)
            case .unknownVersion: parameters.version = 0x14
            case .threeByteOutput: parameters.outputLength = 3
            }
        }
    }

    @Test("Argon2 refuses impossible parameters before allocating", arguments: ImpossibleArgon2.allCases)
    func argon2Refuses(setting: ImpossibleArgon2) {
        var parameters = Argon2.Parameters(
            variant: .argon2d, iterations: 1, memoryKiB: 64, parallelism: 1, salt: Data(count: 32))
        setting.apply(to: &parameters)
        #expect(throws: CryptoError.self) {
            try Argon2.deriveKey(password: SecureBytes(count: 32), parameters: parameters)
        }
    }

    @Test("Argon2d and Argon2id differ, and the salt matters")
    func argon2Sensitivity() throws {
        let password = SecureBytes(bytes: Array("pw".utf8))
        let base = Argon2.Parameters(variant: .argon2d, iterations: 1, memoryKiB: 64, parallelism: 2, salt: Data(count: 32))
        var other = base
        other.variant = .argon2id
        var salted = base
        salted.salt = Data(repeating: 1, count: 32)
        let reference = try Argon2.deriveKey(password: password, parameters: base)
        #expect(try Argon2.deriveKey(password: password, parameters: base) == reference)
        #expect(try Argon2.deriveKey(password: password, parameters: other) != reference)
        #expect(try Argon2.deriveKey(password: password, parameters: salted) != reference)
    }

    @Test("AES-KDF matches an independent implementation", arguments: try VectorFile<AESKDFVector>.load("aes-kdf.json"))
    func aesKDF(vector: AESKDFVector) throws {
        let key = try AESKDF.deriveKey(
            from: SecureBytes(Hex.decode(vector.compositeKey)), seed: Hex.decode(vector.seed), rounds: vector.rounds)
        #expect(Hex.encode(key.unprotectedData()) == vector.transformedKey)
    }

    @Test("AES-KDF equals repeated AES-256-ECB followed by SHA-256")
    func aesKDFDefinition() throws {
        let composite = SecureBytes(bytes: Array(0..<32))
        let seed = Data(repeating: 0x5A, count: 32)
        var block = composite.unprotectedData()
        for _ in 0..<10 {
            block = try ECB.encrypt(block, cipher: .aes256, key: SecureBytes(seed))
        }
        let expected = SHA256.hash(block)
        #expect(try AESKDF.deriveKey(from: composite, seed: seed, rounds: 10).unprotectedData() == expected)
    }

    @Test("AES-KDF refuses wrong key and seed sizes")
    func aesKDFSizes() {
        #expect(throws: CryptoError.invalidKeySize(expected: 32, actual: 16)) {
            try AESKDF.deriveKey(from: SecureBytes(count: 16), seed: Data(count: 32), rounds: 1)
        }
        #expect(throws: CryptoError.invalidKeySize(expected: 32, actual: 31)) {
            try AESKDF.deriveKey(from: SecureBytes(count: 32), seed: Data(count: 31), rounds: 1)
        }
    }
}

import Foundation
import MyPassCrypto
import Testing

struct HMACVector: Decodable, Sendable, CustomTestStringConvertible {
    let name: String
    let key: String
    let data: String
    let mac: String
    var testDescription: String { name }
}

@Suite("HMAC-SHA-256 (RFC 4231)")
struct HMACSHA256Tests {
    @Test("authentication code matches the published value", arguments: try VectorFile<HMACVector>.load("hmac-sha256.json"))
    func knownAnswer(vector: HMACVector) throws {
        let key = try SecureBytes(Hex.decode(vector.key))
        let expected = try Hex.decode(vector.mac)
        let code = try HMACSHA256.authenticationCode(for: Hex.decode(vector.data), key: key)
        // Test case 5 publishes a truncated tag: compare the published prefix.
        #expect(Hex.encode(code.prefix(expected.count)) == vector.mac)
        if expected.count == HMACSHA256.byteCount {
            #expect(try HMACSHA256.isValid(expected, for: Hex.decode(vector.data), key: key))
        }
    }

    @Test("a changed message or tag is rejected")
    func rejectsTampering() {
        let key = SecureBytes(bytes: Array(repeating: 0x0b, count: 20))
        let message = Data("Hi There".utf8)
        var code = HMACSHA256.authenticationCode(for: message, key: key)
        #expect(HMACSHA256.isValid(code, for: message, key: key))
        #expect(!HMACSHA256.isValid(code, for: Data("Hi there".utf8), key: key))
        code[0] ^= 1
        #expect(!HMACSHA256.isValid(code, for: message, key: key))
        #expect(!HMACSHA256.isValid(code.prefix(31), for: message, key: key))
    }

    @Test("incremental authentication equals one-shot")
    func incremental() {
        let key = SecureBytes(bytes: Array(0..<64))
        let message = Data((0..<1000).map { UInt8($0 % 251) })
        var authenticator = HMACSHA256.Authenticator(key: key)
        authenticator.update(message.prefix(7))
        authenticator.update(message.dropFirst(7))
        #expect(authenticator.finalize() == HMACSHA256.authenticationCode(for: message, key: key))
    }
}

import Foundation
import MyPassCrypto
import Testing

/// HMAC-SHA1, the function of a YubiKey's challenge-response slot, against RFC 2202's test cases.
@Suite("HMAC-SHA1 (RFC 2202)")
struct HMACSHA1Tests {
    @Test("authentication code matches the published value", arguments: [
        (String(repeating: "0b", count: 20), Data("Hi There".utf8), "b617318655057264e28bc0b6fb378c8ef146be00"),
        ("4a656665", Data("what do ya want for nothing?".utf8), "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79"),
        (String(repeating: "aa", count: 20), Data(repeating: 0xdd, count: 50), "125d7342b9ac11cd91a39af48aa17b4f63f175d3"),
        (String(repeating: "aa", count: 80), Data("Test Using Larger Than Block-Size Key - Hash Key First".utf8), "aa4ae5e15272d00e95705637ce8a3b55ed402112"),
    ])
    func knownAnswer(key: String, data: Data, mac: String) throws {
        let code = HMACSHA1.authenticationCode(for: data, key: try SecureBytes(Hex.decode(key)))
        #expect(Hex.encode(code) == mac)
    }
}

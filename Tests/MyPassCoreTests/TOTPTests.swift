import Foundation
import MyPassCore
import MyPassCrypto
import Testing

@Suite("TOTP (RFC 6238 / RFC 4226) and the ways entries store it")
struct TOTPTests {
    static let sha1Seed = "12345678901234567890"
    static let seeds: [OTPHashAlgorithm: String] = [
        .sha1: sha1Seed,
        .sha256: "12345678901234567890123456789012",
        .sha512: "1234567890123456789012345678901234567890123456789012345678901234",
    ]

    @Test("RFC 6238 appendix B: every time and algorithm, 8 digits", arguments: [
        (Int64(59), "94287082", "46119246", "90693936"),
        (1_111_111_109, "07081804", "68084774", "25091201"),
        (1_111_111_111, "14050471", "67062674", "99943326"),
        (1_234_567_890, "89005924", "91819424", "93441116"),
        (2_000_000_000, "69279037", "90698825", "38618901"),
        (20_000_000_000, "65353130", "77737706", "47863826"),
    ])
    func rfc6238(time: Int64, sha1: String, sha256: String, sha512: String) throws {
        for (algorithm, expected) in [(OTPHashAlgorithm.sha1, sha1), (.sha256, sha256), (.sha512, sha512)] {
            let totp = try TOTP(secret: SecureBytes(Data(Self.seeds[algorithm]!.utf8)), algorithm: algorithm, encoding: .digits(8))
            #expect(try totp.code(at: Date(timeIntervalSince1970: TimeInterval(time))) == expected, "\(algorithm)")
        }
    }

    @Test("RFC 4226 appendix D: HOTP codes for counters 0-9")
    func rfc4226() throws {
        let expected = ["755224", "287082", "359152", "969429", "338314", "254676", "287922", "162583", "399871", "520489"]
        let hotp = try TOTP(secret: SecureBytes(Data(Self.sha1Seed.utf8)))
        #expect(try (0..<10).map { try hotp.code(counter: UInt64($0)) } == expected)
    }

    @Test("seconds remaining in the period")
    func remaining() throws {
        let totp = try TOTP(secret: SecureBytes(Data(Self.sha1Seed.utf8)), period: 30)
        #expect(totp.secondsRemaining(at: Date(timeIntervalSince1970: 59)) == 1)
        #expect(totp.secondsRemaining(at: Date(timeIntervalSince1970: 60)) == 30)
    }

    /// The RFC seed in Base32.
    static let base32Seed = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"

    static func entry(_ fields: [String: String]) -> Entry {
        Entry(uuid: UUID(), times: Times(allAt: Timestamp(unixSeconds: 1_700_000_000)),
              fields: fields.sorted { $0.key < $1.key }.map { EntryField(key: $0.key, value: FieldValue($0.value, isProtected: true)) })
    }

    @Test("every stored form gives the same code for the same secret", arguments: [
        ["otp": "otpauth://totp/Example:alice?secret=\(base32Seed)&issuer=Example&digits=8"],
        ["otp": "otpauth://totp/x?secret=\(base32Seed.lowercased())&algorithm=SHA1&period=30&digits=8"],
        ["otp": "otpauth://totp/x?secret=GEZD GNBV GY3T QOJQ GEZD GNBV GY3T QOJQ====&digits=8"],
        ["TOTP Seed": base32Seed, "TOTP Settings": "30;8"],
        ["TimeOtp-Secret": sha1Seed, "TimeOtp-Length": "8"],
        ["TimeOtp-Secret-Hex": "3132333435363738393031323334353637383930", "TimeOtp-Length": "8", "TimeOtp-Algorithm": "HMAC-SHA-1"],
        ["TimeOtp-Secret-Base32": base32Seed, "TimeOtp-Length": "8", "TimeOtp-Period": "30"],
        ["TimeOtp-Secret-Base64": "MTIzNDU2Nzg5MDEyMzQ1Njc4OTA=", "TimeOtp-Length": "8"],
    ])
    func storedForms(fields: [String: String]) throws {
        let totp = try #require(try TOTP.configuration(of: Self.entry(fields)))
        #expect(try totp.code(at: Date(timeIntervalSince1970: 59)) == "94287082")
    }

    @Test("SHA-256 and SHA-512 and other periods are read from each form")
    func algorithmsAndPeriods() throws {
        let uri = try #require(try TOTP.configuration(of: Self.entry(["otp": "otpauth://totp/x?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQGEZA&algorithm=SHA256&digits=8&period=60"])))
        #expect(uri.algorithm == .sha256 && uri.period == 60)
        #expect(try uri.code(counter: 0) == TOTP(secret: SecureBytes(Data(Self.seeds[.sha256]!.utf8)), algorithm: .sha256, encoding: .digits(8)).code(counter: 0))
        let keepass = try #require(try TOTP.configuration(of: Self.entry(["TimeOtp-Secret": Self.seeds[.sha512]!, "TimeOtp-Length": "8",
                                                                           "TimeOtp-Algorithm": "HMAC-SHA-512"])))
        #expect(try keepass.code(at: Date(timeIntervalSince1970: 59)) == "90693936")
    }

    @Test("Steam Guard codes: five characters of Steam's alphabet, from the URI or the legacy settings")
    func steam() throws {
        let fromURI = try #require(try TOTP.configuration(of: Self.entry(["otp": "otpauth://totp/Steam:x?secret=\(Self.base32Seed)&encoder=steam"])))
        let legacy = try #require(try TOTP.configuration(of: Self.entry(["TOTP Seed": Self.base32Seed, "TOTP Settings": "30;S"])))
        let first = try fromURI.code(at: Date(timeIntervalSince1970: 59)), second = try legacy.code(at: Date(timeIntervalSince1970: 59))
        #expect(first == second && first.count == 5)
        #expect(first.allSatisfy { "23456789BCDFGHJKMNPQRTVWXY".contains($0) })
        // The truncated value of this vector is 0x4C93CF18 (RFC 4226's 1284755224); its base-26 digits, least first.
        var value: UInt32 = 1_284_755_224 % (1 << 31)
        let alphabet = Array("23456789BCDFGHJKMNPQRTVWXY")
        var expected = ""
        for _ in 0..<5 { expected.append(alphabet[Int(value % 26)]); value /= 26 }
        #expect(try legacy.code(counter: 0) == expected)
    }

    @Test("invalid configurations are typed errors", arguments: [
        ["otp": "otpauth://hotp/x?secret=\(base32Seed)"],
        ["otp": "otpauth://totp/x?secret=not*base32"],
        ["otp": "otpauth://totp/x?digits=6"],
        ["otp": "https://example.com"],
        ["otp": "otpauth://totp/x?secret=\(base32Seed)&algorithm=MD5"],
        ["otp": "otpauth://totp/x?secret=\(base32Seed)&period=0"],
        ["TOTP Seed": "!!!", "TOTP Settings": "30;6"],
        ["TimeOtp-Secret-Hex": "xyz"],
    ])
    func invalid(fields: [String: String]) {
        #expect(throws: TOTPError.self) { try TOTP.configuration(of: Self.entry(fields)) }
    }

    @Test("an entry without any one-time-password field has none")
    func none() throws {
        #expect(try TOTP.configuration(of: Self.entry(["Title": "x", "Password": "y"])) == nil)
    }
}

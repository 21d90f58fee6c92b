import Foundation
import KDBXFormat
import MyPassCrypto
import Testing
import TestSupport

@Suite("Outer header, VariantDictionary, KDF parameters")
struct OuterHeaderTests {
    @Test("every fixture's header matches its manifest", arguments: try FixtureVault.all())
    func fixtureHeaders(fixture: FixtureVault) throws {
        let header = try KDBXReader.header(of: fixture.bytes())
        #expect(header.version.description == fixture.format.version)
        #expect(header.cipher.rawValue == fixture.format.cipher)
        #expect(header.kdf.name == fixture.format.kdf)
        #expect(header.compression.name == fixture.format.compression)
        #expect(header.masterSeed.count == 32)
    }

    @Test("the fixture set covers every cipher, KDF, compression and version")
    func fixtureCoverage() throws {
        let fixtures = try FixtureVault.all()
        #expect(Set(fixtures.map(\.format.cipher)) == ["aes256", "chacha20", "twofish"])
        #expect(Set(fixtures.map(\.format.kdf)) == ["aes-kdf", "argon2d", "argon2id"])
        #expect(Set(fixtures.map(\.format.compression)) == ["gzip", "none"])
        #expect(Set(fixtures.map(\.format.version)) == ["3.1", "4.0", "4.1"])
    }

    @Test("a parsed header serialises to a header that parses back equal", arguments: try FixtureVault.all())
    func headerRoundTrip(fixture: FixtureVault) throws {
        let header = try OuterHeader.parse(fixture.bytes()).header
        let serialized = try header.serialized()
        let (reparsed, length) = try OuterHeader.parse(serialized)
        #expect(reparsed == header)
        #expect(length == serialized.count)
    }

    @Test("every truncation of a header is an error, never a crash", arguments: try FixtureVault.all().prefix(3))
    func truncatedHeaders(fixture: FixtureVault) throws {
        let bytes = try fixture.bytes()
        let length = try OuterHeader.parse(bytes).length
        for cut in 0..<length {
            #expect(throws: KDBXError.self) { try OuterHeader.parse(bytes.prefix(cut)) }
        }
    }

    @Test("signatures and versions are checked", arguments: [
        (Data(), KDBXError.notKDBX),
        (Data([0x03, 0xD9, 0xA2, 0x9A, 0x67, 0xFB, 0x4B]), KDBXError.notKDBX),
        (Data([0x03, 0xD9, 0xA2, 0x9A, 0x65, 0xFB, 0x4B, 0xB5, 0, 0, 1, 0]), KDBXError.unsupportedVersion("1.x (KeePass 1 .kdb)")),
        (Data([0x03, 0xD9, 0xA2, 0x9A, 0x67, 0xFB, 0x4B, 0xB5, 0, 0, 1, 0]), KDBXError.unsupportedVersion("1.0")),
        (Data([0x03, 0xD9, 0xA2, 0x9A, 0x67, 0xFB, 0x4B, 0xB5, 0, 0, 2, 0]), KDBXError.truncated("outer header")),
        (Data([0x03, 0xD9, 0xA2, 0x9A, 0x67, 0xFB, 0x4B, 0xB5, 0, 0, 5, 0]), KDBXError.unsupportedVersion("5.0")),
        (Data("<?xml version".utf8), KDBXError.notKDBX),
    ])
    func signatures(bytes: Data, expected: KDBXError) {
        #expect(throws: expected) { try KDBXReader.header(of: bytes) }
    }

    @Test("a repeated header field is corrupt")
    func duplicateField() throws {
        let bytes = try FixtureVault.all().first { $0.format.version == "4.0" }!.bytes()
        // Insert a second compression-flags field (id 3, length 4) right after the version.
        var forged = bytes.prefix(12)
        forged.append(contentsOf: [3, 4, 0, 0, 0, 1, 0, 0, 0])
        forged.append(bytes.dropFirst(12))
        #expect(throws: KDBXError.corrupt("header field compressionFlags appears twice")) {
            try KDBXReader.header(of: forged)
        }
    }

    @Test("a header length beyond the file is truncation, not an allocation")
    func hugeLength() {
        var forged = Data([0x03, 0xD9, 0xA2, 0x9A, 0x67, 0xFB, 0x4B, 0xB5, 0, 0, 4, 0])
        forged.append(contentsOf: [2, 0xFF, 0xFF, 0xFF, 0x7F])
        #expect(throws: KDBXError.truncated("outer header")) { try KDBXReader.header(of: forged) }
    }

    @Test("VariantDictionary keeps order and every type through a round trip")
    func variantDictionaryRoundTrip() throws {
        var dictionary = VariantDictionary()
        dictionary["u32"] = .uint32(7)
        dictionary["u64"] = .uint64(.max)
        dictionary["bool"] = .bool(true)
        dictionary["i32"] = .int32(-5)
        dictionary["i64"] = .int64(.min)
        dictionary["string"] = .string("grüße")
        dictionary["bytes"] = .bytes(Data([1, 2, 3]))
        let parsed = try VariantDictionary(parsing: dictionary.serialized())
        #expect(parsed == dictionary)
        #expect(parsed.items.map(\.key) == ["u32", "u64", "bool", "i32", "i64", "string", "bytes"])
    }

    @Test("malformed VariantDictionaries are rejected", arguments: [
        Data([0x00, 0x02, 0x00]),                                  // major version 2
        Data([0x00, 0x01]),                                        // no terminator
        Data([0x00, 0x01, 0x04, 1, 0, 0, 0, 0x41, 8, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 0]),  // UInt32 of 8 bytes
        Data([0x00, 0x01, 0x77, 1, 0, 0, 0, 0x41, 0, 0, 0, 0, 0]),   // unknown type
        Data([0x00, 0x01, 0x42, 0xFF, 0xFF, 0xFF, 0x7F, 0x41]),       // key length beyond the data
        Data([0x00, 0x01, 0x42, 0xFF, 0xFF, 0xFF, 0xFF, 0x41]),       // negative key length
        Data([0x00, 0x01, 0x00, 0x99]),                            // trailing bytes
    ])
    func badVariantDictionary(bytes: Data) {
        #expect(throws: KDBXError.self) { try VariantDictionary(parsing: bytes) }
    }

    @Test("KDF bombs are refused before any derivation", arguments: [
        KDFParameters.argon2(.init(variant: .argon2d, salt: Data(count: 32), iterations: 2, memoryBytes: 1 << 62, parallelism: 2)),
        KDFParameters.argon2(.init(variant: .argon2id, salt: Data(count: 32), iterations: .max, memoryBytes: 1 << 20, parallelism: 2)),
        KDFParameters.argon2(.init(variant: .argon2d, salt: Data(count: 32), iterations: 2, memoryBytes: 1 << 20, parallelism: 1 << 24)),
        KDFParameters.aesKDF(seed: Data(count: 32), rounds: .max),
    ])
    func kdfBombs(parameters: KDFParameters) {
        #expect {
            try parameters.check(against: .standard)
        } throws: { error in
            guard case KDBXError.resourceCapExceeded = error else { return false }
            return true
        }
    }

    @Test("a 4 GiB Argon2 setting passes once the cap is raised")
    func raisedCap() throws {
        let parameters = KDFParameters.argon2(.init(variant: .argon2d, salt: Data(count: 32), iterations: 2, memoryBytes: 4 << 30, parallelism: 2))
        #expect(throws: KDBXError.self) { try parameters.check(against: .standard) }
        var limits = ResourceLimits.standard
        limits.maximumArgon2MemoryBytes = 4 << 30
        try parameters.check(against: limits)
    }
}

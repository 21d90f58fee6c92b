import Foundation
@testable import KDBXFormat
import MyPassCore
import MyPassCrypto
import Testing

/// What a save checks on the bytes it reads back: they decrypt with the key, pass every integrity
/// check and decompress to exactly the payload the writer produced (`KDBXReader.payloadDigest`).
@Suite("the payload digest proves a written file")
struct PayloadDigestTests {
    static let key = try! CompositeKey(password: "digest")

    static func vault(_ title: String) -> Vault {
        let time = Timestamp(iso8601: "2026-04-01T12:00:00Z")!
        var vault = Vault.empty(name: "digest", at: time)
        var entry = Entry(uuid: UUID(), times: Times(allAt: time))
        entry.fields = [EntryField(key: "Title", value: .plain(title)), EntryField(key: "Password", value: FieldValue("pw", isProtected: true))]
        entry.attachments = [Attachment(name: "a.bin", binary: vault.binaries.add(Data("attached".utf8), isProtected: true))]
        vault.root.entries = [entry]
        return vault
    }

    static let formats: [FormatSettings] = [KDBXVersion.v3_1, .v4_0, .v4_1].flatMap { version in
        [PayloadCompression.gzip, .none].map { compression in
            FormatSettings(version: version, cipher: version == .v4_1 ? .chaCha20 : .aes256,
                           kdf: .aesKDF(seed: Data(repeating: 9, count: 32), rounds: 10), compression: compression)
        }
    }

    @Test("a written file gives back the digest of its payload, in every container version and compression",
          arguments: formats)
    func digestOfWrittenFile(settings: FormatSettings) throws {
        let encoded = try KDBXWriter.encode(Self.vault("one"), settings: settings, key: Self.key)
        #expect(try KDBXReader.payloadDigest(of: encoded.file, derivedKey: encoded.derivedKey) == encoded.payloadDigest)
        // Another vault under the same key and settings is a different payload.
        let other = try KDBXWriter.encode(Self.vault("two"), settings: settings, key: Self.key, cachedKey: encoded.derivedKey)
        #expect(try KDBXReader.payloadDigest(of: other.file, derivedKey: encoded.derivedKey) != encoded.payloadDigest)
    }

    @Test("a changed byte anywhere after the header, or another key, fails before any digest is given")
    func corruptionFails() throws {
        for settings in Self.formats {
            let encoded = try KDBXWriter.encode(Self.vault("one"), settings: settings, key: Self.key)
            for offset in stride(from: encoded.file.count - 1, to: encoded.file.count / 2, by: -97) {
                var damaged = encoded.file
                damaged[offset] ^= 0x01
                var gaveSameDigest = false
                do {
                    gaveSameDigest = try KDBXReader.payloadDigest(of: damaged, derivedKey: encoded.derivedKey) == encoded.payloadDigest
                } catch {}
                #expect(!gaveSameDigest, "byte \(offset) of \(settings.version)")
            }
            var otherSalt = settings
            otherSalt.kdf = .aesKDF(seed: Data(repeating: 8, count: 32), rounds: 10)
            let differentKey = try KDBXWriter.encode(Self.vault("one"), settings: otherSalt, key: Self.key)
            #expect(throws: KDBXError.self) { try KDBXReader.payloadDigest(of: encoded.file, derivedKey: differentKey.derivedKey) }
        }
    }

    @Test("a gzip stream cut short or not gzip at all fails the proof, though every block's HMAC holds; whole, it passes")
    func brokenGzipFails() throws {
        let settings = FormatSettings(version: .v4_0, cipher: .aes256, kdf: .aesKDF(seed: Data(repeating: 9, count: 32), rounds: 10),
                                      compression: .gzip)
        let encoded = try KDBXWriter.encode(Self.vault("one"), settings: settings, key: Self.key)
        let (header, headerLength) = try OuterHeader.parse(encoded.file)
        // Big enough that the stream spans several pieces of the checking thread.
        let gzip = try Gzip.compress(Data((0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) }))
        func file(carrying payload: Data) throws -> Data {
            var encrypted = payload
            try PayloadCrypto.encrypt(inPlace: &encrypted, cipher: .aes256, key: try encoded.derivedKey.cipherKey(masterSeed: header.masterSeed),
                                      iv: header.encryptionIV)
            var file = Data(encoded.file.prefix(headerLength + 64))
            HMACBlockStream.write(encrypted, baseKey: encoded.derivedKey.hmacBaseKey(masterSeed: header.masterSeed), appendingTo: &file)
            return file
        }
        #expect(try KDBXReader.payloadDigest(of: try file(carrying: gzip), derivedKey: encoded.derivedKey) == SHA256.hash(gzip))
        for broken in [gzip.prefix(gzip.count / 2), gzip.prefix(gzip.count - 4), Data(repeating: 0x41, count: 5_000)] {
            #expect(throws: KDBXError.self) { try KDBXReader.payloadDigest(of: try file(carrying: Data(broken)), derivedKey: encoded.derivedKey) }
        }
    }
}

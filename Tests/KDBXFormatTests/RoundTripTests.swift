import Foundation
import KDBXFormat
import MyPassCore
import MyPassCrypto
import Testing
import TestSupport

/// One cell of the format matrix.
struct FormatCase: Sendable, CustomTestStringConvertible {
    let version: KDBXVersion
    let cipher: PayloadCipher
    let kdf: String
    let compression: PayloadCompression
    var testDescription: String { "\(version) \(cipher.rawValue) \(kdf) \(compression.name)" }

    var settings: FormatSettings {
        let salt = Data(repeating: 7, count: 32)
        let parameters: KDFParameters = switch kdf {
        case "aes-kdf": .aesKDF(seed: salt, rounds: 100)
        case "argon2d": .argon2(.init(variant: .argon2d, salt: salt, iterations: 1, memoryBytes: 64 * 1024, parallelism: 2))
        default: .argon2(.init(variant: .argon2id, salt: salt, iterations: 1, memoryBytes: 64 * 1024, parallelism: 2))
        }
        return FormatSettings(version: version, cipher: cipher, kdf: parameters, compression: compression)
    }

    static let all: [FormatCase] = {
        var cases: [FormatCase] = []
        for version in [KDBXVersion.v3_1, .v4_0, .v4_1] {
            for cipher in PayloadCipher.allCases {
                for kdf in version.isKDBX4 ? ["aes-kdf", "argon2d", "argon2id"] : ["aes-kdf"] {
                    for compression in [PayloadCompression.gzip, .none] {
                        cases.append(FormatCase(version: version, cipher: cipher, kdf: kdf, compression: compression))
                    }
                }
            }
        }
        return cases
    }()
}

@Suite("Writing: round trips through every format and every fixture")
struct RoundTripTests {
    static let key = try! CompositeKey(password: "round-trip pässword")

    @Test("open(save(v)) == v for every version, cipher, KDF and compression", arguments: FormatCase.all)
    func matrix(format: FormatCase) throws {
        let vault = SampleVault.make()
        let (file, _) = try KDBXWriter.serialize(vault, settings: format.settings, key: Self.key)
        let opened = try KDBXReader.open(file, key: Self.key)
        #expect(opened.settings.version == format.version)
        #expect(opened.settings.cipher == format.cipher)
        #expect(opened.settings.kdf == format.settings.kdf)
        #expect(opened.settings.compression == format.compression)
        // KDBX 3.1 keeps no attachment protection flag (`KDBXVersion.keepsAttachmentProtection`).
        #expect(opened.vault == VersionFit.asStored(vault, writtenAs: format.version))
        #expect(format.version.isKDBX4 || opened.vault.binaries.binaries.values.allSatisfy { !$0.isProtected })
    }

    @Test("4.1-only content raises the version to 4.1 and survives", arguments: [KDBXVersion.v3_1, .v4_0])
    func upgradesForKDBX41Content(requested: KDBXVersion) throws {
        let vault = SampleVault.make(kdbx41Features: true)
        let settings = FormatSettings(version: requested, cipher: .aes256, kdf: .aesKDF(seed: Data(count: 32), rounds: 10))
        let (file, _) = try KDBXWriter.serialize(vault, settings: settings, key: Self.key)
        let opened = try KDBXReader.open(file, key: Self.key)
        #expect(opened.settings.version == .v4_1)
        #expect(opened.vault == vault)
    }

    @Test("KDBX 3.1 cannot be written with Argon2")
    func kdbx3WithArgon2() {
        let settings = FormatSettings(version: .v3_1, cipher: .aes256,
                                      kdf: .argon2(.init(variant: .argon2d, salt: Data(count: 32), iterations: 1, memoryBytes: 65536, parallelism: 1)))
        #expect(throws: KDBXError.self) { try KDBXWriter.serialize(SampleVault.make(), settings: settings, key: Self.key) }
    }

    @Test("every fixture survives open -> save -> open unchanged", arguments: try FixtureVault.all())
    func fixtureRoundTrip(fixture: FixtureVault) throws {
        let key = try CompositeKey(password: fixture.credentials.password, keyFileContents: fixture.keyFileBytes())
        let opened = try KDBXReader.open(fixture.bytes(), key: key)
        let (file, derived) = try KDBXWriter.serialize(opened.vault, settings: opened.settings, key: key, cachedKey: opened.derivedKey)
        let reopened = try KDBXReader.open(file, key: key)
        #expect(reopened.vault == opened.vault)
        #expect(reopened.settings.kdf == opened.settings.kdf)
        #expect(derived.kdf == opened.derivedKey.kdf)
    }

    @Test("each save draws a fresh master seed and IV but keeps the KDF salt")
    func freshSeeds() throws {
        let format = FormatCase(version: .v4_0, cipher: .chaCha20, kdf: "argon2id", compression: .gzip)
        let (first, derived) = try KDBXWriter.serialize(SampleVault.make(), settings: format.settings, key: Self.key)
        let (second, _) = try KDBXWriter.serialize(SampleVault.make(), settings: format.settings, key: Self.key, cachedKey: derived)
        let headerA = try KDBXReader.header(of: first), headerB = try KDBXReader.header(of: second)
        #expect(headerA.masterSeed != headerB.masterSeed)
        #expect(headerA.encryptionIV != headerB.encryptionIV)
        #expect(headerA.kdf == headerB.kdf)
    }

    @Test("characters XML cannot carry are dropped rather than making the file unreadable")
    func forbiddenCharacters() throws {
        var vault = SampleVault.make()
        vault.root.groups[0].entries[0].setField("Notes", .plain("bell\u{7} and nul\u{0} gone, tab\tkept"))
        let format = FormatCase(version: .v4_0, cipher: .aes256, kdf: "aes-kdf", compression: .none)
        let (file, _) = try KDBXWriter.serialize(vault, settings: format.settings, key: Self.key)
        let opened = try KDBXReader.open(file, key: Self.key)
        #expect(opened.vault.root.groups[0].entries[0].notes == "bell and nul gone, tab\tkept")
    }

    @Test("generated vaults (seeded): long, markup-laden and deeply nested values read back exactly from the XML export and from the file", arguments: 0..<12)
    func generatedValuesReadBack(seed: UInt64) throws {
        var random = SeededRandom(seed: 20_261_204 &+ seed)
        // Pieces that take every path of the writer: plain text, markup and CR (escaped by libxml2),
        // non-ASCII, and lengths around and far beyond its 16 KiB staging block.
        let pieces = ["a", "word ", "<", ">", "&", "\"", "'", "\t", "\n", "\r\n", "é", "✓", "\u{1F511}", "]]>"]
        func text(from pieces: [String] = pieces) -> String {
            let length = [0, 1, 15, 100, 16 * 1024 - 1, 16 * 1024, 40_000].randomElement(using: &random)!
            var value = ""
            while value.utf8.count < length { value += pieces.randomElement(using: &random)! }
            return value
        }
        let time = Timestamp(iso8601: "2026-12-04T10:00:00Z")!
        var expected: [UUID: (title: String, notes: String, password: String, custom: String, plain: String)] = [:]
        func entry() -> Entry {
            var entry = Entry(uuid: UUID(), times: Times(allAt: time))
            // Markup-free text is staged as it is (a long one written past the staging block directly).
            let values = (title: text(), notes: text(), password: text(), custom: text(), plain: text(from: ["a", "word ", "é"]))
            entry.fields = [EntryField(key: "Title", value: .plain(values.title)),
                            EntryField(key: "Notes", value: .plain(values.notes)),
                            EntryField(key: "Password", value: FieldValue(values.password, isProtected: true)),
                            EntryField(key: "Custom <&>", value: .plain(values.custom)),
                            EntryField(key: "Plain", value: .plain(values.plain))]
            expected[entry.uuid] = values
            return entry
        }
        // A chain of groups 1 to 24 deep (beyond the 16 levels of indentation written in one piece).
        let depth = Int.random(in: 1...24, using: &random)
        var innermost = Group(uuid: UUID(), name: text(), times: Times(allAt: time), entries: [entry()])
        for _ in 1..<depth {
            innermost = Group(uuid: UUID(), name: "level", times: Times(allAt: time), groups: [innermost], entries: [entry()])
        }
        var vault = Vault.empty(name: "generated", at: time)
        vault.root.groups = [innermost]

        var xml = Data()
        try KDBXWriter.writePlainXML(vault, to: { xml.append(contentsOf: $0) })
        let exported = try KDBXReader.vault(fromPlainXML: xml)
        let format = FormatCase(version: .v4_0, cipher: .chaCha20, kdf: "aes-kdf", compression: .gzip)
        let (file, _) = try KDBXWriter.serialize(vault, settings: format.settings, key: Self.key)
        let reopened = try KDBXReader.open(file, key: Self.key).vault
        for readBack in [exported, reopened] {
            let entries = readBack.root.allEntries()
            #expect(entries.count == expected.count, "seed \(seed)")
            for (entry, _) in entries {
                let values = try #require(expected[entry.uuid], "seed \(seed)")
                #expect(entry.title == values.title && entry.notes == values.notes, "seed \(seed)")
                #expect(entry.text("Password") == values.password && entry.text("Custom <&>") == values.custom, "seed \(seed)")
                #expect(entry.text("Plain") == values.plain, "seed \(seed)")
            }
        }
        // The export is indented with one tab per level, the deepest entry too.
        let deepest = String(repeating: "\t", count: depth + 3) + "<Entry>"
        #expect(String(decoding: xml, as: UTF8.self).contains("\n" + deepest), "seed \(seed)")
    }
}

import Foundation
@testable import KDBXFormat
import MyPassCore
import MyPassCrypto
import Testing
import TestSupport

/// A save writes every other piece of its entries on a helper thread (`DocumentPieces`,
/// `FragmentWriter`), each piece's protected values masked from the inner stream's position where
/// that piece starts: the document must be byte for byte the one written on one thread, for every
/// shape of group tree, history and protected value, and at every piece size.
@Suite("a document written in pieces on two threads is the document written on one")
struct DocumentPiecesTests {
    @Test("generated vaults: the same bytes at every piece size, KDBX 4 (ChaCha20) and 3.1 (Salsa20)",
          arguments: 0..<24)
    func sameBytes(seed: Int) throws {
        var generator = SeededRandom(seed: 0xD0C_0000 + UInt64(seed))
        let vault = Self.generatedVault(using: &generator)
        let version: KDBXVersion = seed % 3 == 2 ? .v3_1 : .v4_0
        let whole = try Self.document(of: vault, version: version, versionsPerPiece: nil)
        for versionsPerPiece in [1, 2, 3, Int.random(in: 4...40, using: &generator), 512] {
            let pieces = DocumentPieces(root: vault.root, versionsPerPiece: versionsPerPiece)
            let inPieces = try Self.document(of: vault, version: version, versionsPerPiece: versionsPerPiece)
            // A Bool: on failure the testing library would otherwise diff two documents byte by byte (minutes).
            let same = inPieces == whole
            #expect(same, "seed \(seed), \(versionsPerPiece) versions per piece, \(pieces?.groups.joined().count ?? 1) pieces")
        }
    }

    @Test("a vault written in pieces reads back equal, its protected values intact")
    func roundTrip() throws {
        var generator = SeededRandom(seed: 0xD0C_1000)
        var vault = Self.generatedVault(using: &generator)
        // Enough versions for the default piece size to make several pieces.
        let many = (0..<1_200).map { index in
            var entry = Entry(uuid: UUID(), times: Times(allAt: Timestamp(unixSeconds: 1_700_000_000 + Int64(index))))
            entry.fields = [EntryField(key: EntryField.title, value: .plain("entry \(index)")),
                            EntryField(key: EntryField.password, value: FieldValue(String(repeating: "p", count: index % 97), isProtected: true))]
            return entry
        }
        vault.root.entries += many
        #expect((DocumentPieces(root: vault.root)?.groups.joined().count ?? 0) >= 3)
        let key = try CompositeKey(password: "pieces")
        let settings = FormatSettings(version: .v4_0, cipher: .aes256, kdf: .aesKDF(seed: Data(count: 32), rounds: 1))
        let file = try KDBXWriter.serialize(vault, settings: settings, key: key).0
        let read = try KDBXReader.open(file, key: key).vault
        let same = read.root == vault.root
        #expect(same)
    }

    @Test("a helper that fails stops the save with its error, and nothing waits for it")
    func helperFailure() throws {
        var generator = SeededRandom(seed: 0xD0C_2000)
        var vault = Self.generatedVault(using: &generator)
        var entries = (0..<40).map { index in
            var entry = Entry(uuid: UUID(), times: Times(allAt: Timestamp(unixSeconds: 1_700_000_000)))
            entry.fields = [EntryField(key: EntryField.title, value: .plain("entry \(index)"))]
            return entry
        }
        // An attachment whose content is not in the pool, in the second piece: the helper's.
        entries[15].attachments = [Attachment(name: "lost.bin", binary: BinaryID(of: Data("not in the pool".utf8)))]
        vault.root.groups = []
        vault.root.entries = entries
        let pieces = try #require(DocumentPieces(root: vault.root, versionsPerPiece: 10))
        #expect(pieces.helpers.contains { $0.entries.contains { !$0.attachments.isEmpty } })
        #expect(throws: KDBXError.unwritable("attachment 'lost.bin' refers to missing content")) {
            _ = try Self.document(of: vault, version: .v4_0, versionsPerPiece: 10)
        }
    }

    // MARK: Helpers

    /// The XML document of `vault` as a save writes it, its inner stream keyed the same every time.
    static func document(of vault: Vault, version: KDBXVersion, versionsPerPiece: Int?) throws -> Data {
        let key = Data(repeating: 9, count: 64)
        let stream = try PayloadCrypto.innerStream(version.isKDBX4 ? .chaCha20 : .salsa20, key: key)
        let used = vault.root.referencedBinaries()
        var writer = VaultDocumentWriter(vault: vault, version: version, innerStream: stream, headerHash: nil,
                                         binaryOrder: vault.binaries.sortedIDs.filter { used.contains($0) },
                                         compressMetaBinaries: false)
        writer.versionsPerPiece = versionsPerPiece
        return try writer.write()
    }

    /// A vault of random shape: nested groups (some empty), entries with up to eight history items,
    /// protected values of every length from empty to a few hundred bytes (some not ASCII), plain
    /// values with characters to escape, and attachments.
    static func generatedVault(using generator: inout SeededRandom) -> Vault {
        let start = Timestamp(unixSeconds: 1_700_000_000)
        var vault = Vault.empty(name: "pieces", at: start)
        let binaries = (0..<3).map { index in
            vault.binaries.add(Data((0..<(index * 50 + 1)).map { UInt8(truncatingIfNeeded: $0 &* 31) }), isProtected: index != 0)
        }
        func text(_ generator: inout SeededRandom) -> String {
            let alphabet = Array("abcXYZ 0189<>&\"'é✓🔑\t\n")
            return String((0..<Int.random(in: 0...Int.random(in: 1...300, using: &generator), using: &generator))
                .map { _ in alphabet.randomElement(using: &generator)! })
        }
        func uuid(_ generator: inout SeededRandom) -> UUID {
            var bytes = (generator.next(), generator.next())
            return withUnsafeBytes(of: &bytes) { UUID(uuid: $0.load(as: uuid_t.self)) }
        }
        func entry(_ generator: inout SeededRandom, at time: Int64) -> Entry {
            var entry = Entry(uuid: uuid(&generator), times: Times(allAt: Timestamp(unixSeconds: 1_700_000_000 + time)))
            entry.fields = [EntryField(key: EntryField.title, value: .plain(text(&generator)))]
            for index in 0..<Int.random(in: 0...4, using: &generator) {
                entry.fields.append(EntryField(key: "field \(index)", value: FieldValue(text(&generator), isProtected: Bool.random(using: &generator))))
            }
            if Int.random(in: 0..<5, using: &generator) == 0 {
                entry.attachments = [Attachment(name: "file", binary: binaries.randomElement(using: &generator)!)]
            }
            return entry
        }
        func group(_ generator: inout SeededRandom, depth: Int) -> Group {
            var made = Group(uuid: uuid(&generator), name: text(&generator), times: Times(allAt: start))
            made.entries = (0..<Int.random(in: 0...(depth == 0 ? 30 : 12), using: &generator)).map { index in
                var current = entry(&generator, at: Int64(index))
                current.history = (0..<Int.random(in: 0...8, using: &generator)).map { item in entry(&generator, at: Int64(item)) }
                return current
            }
            if depth < 3 {
                made.groups = (0..<Int.random(in: 0...3, using: &generator)).map { _ in group(&generator, depth: depth + 1) }
            }
            return made
        }
        vault.root = group(&generator, depth: 0)
        return vault
    }
}

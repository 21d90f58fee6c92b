import Foundation
import KDBXFormat
import MyPassCore
import Testing

@Suite("Broken files: every truncation and byte flip is a typed error, never a crash")
struct HostileInputTests {
    /// A small vault with a cheap KDF, written by us in each container version.
    static func smallFile(version: KDBXVersion, cipher: PayloadCipher) throws -> (Data, CompositeKey, DerivedKey) {
        var vault = Vault.empty(name: "tiny", at: Timestamp(unixSeconds: 1_700_000_000))
        var entry = Entry(uuid: UUID(), times: Times(allAt: Timestamp(unixSeconds: 1_700_000_000)))
        entry.fields = [EntryField(key: "Title", value: .plain("t")), EntryField(key: "Password", value: FieldValue("p", isProtected: true))]
        vault.root.entries = [entry]
        let key = try CompositeKey(password: "pw")
        let settings = FormatSettings(version: version, cipher: cipher, kdf: .aesKDF(seed: Data(count: 32), rounds: 1))
        let (file, derived) = try KDBXWriter.serialize(vault, settings: settings, key: key)
        return (file, key, derived)
    }

    @Test("every prefix of a file fails cleanly", arguments: [(KDBXVersion.v3_1, PayloadCipher.aes256), (.v4_0, .chaCha20), (.v4_0, .twofish)])
    func everyPrefix(version: KDBXVersion, cipher: PayloadCipher) throws {
        let (file, key, derived) = try Self.smallFile(version: version, cipher: cipher)
        _ = try KDBXReader.open(file, key: key, cachedKey: derived)
        for length in 0..<file.count {
            #expect(throws: KDBXError.self, "prefix of \(length) bytes") {
                try KDBXReader.open(file.prefix(length), key: key, cachedKey: derived)
            }
        }
    }

    /// A KDBX 3.1 payload starts with 32 bytes the header repeats; a file cut right after them leaves
    /// the last start byte to be read as padding. Files are written until that byte is 0x01 (valid
    /// padding of one byte), so the cut leaves 31 bytes: a typed error, never a range trap.
    @Test("a 3.1 file cut after start bytes that end like padding fails cleanly")
    func cutAfterStartBytesThatLookLikePadding() throws {
        for _ in 0..<20_000 {
            let (file, key, derived) = try Self.smallFile(version: .v3_1, cipher: .aes256)
            let (header, headerLength) = try OuterHeader.parse(file)
            guard header.streamStartBytes?.last == 0x01 else { continue }
            #expect(throws: KDBXError.truncated("KDBX 3.1 payload")) {
                try KDBXReader.open(file.prefix(headerLength + 32), key: key, cachedKey: derived)
            }
            return
        }
        Issue.record("no file with start bytes ending in 0x01 in 20,000 writes")
    }

    @Test("a file handed over as a slice of a larger buffer opens, and its prefixes fail cleanly")
    func sliceOfLargerBuffer() throws {
        for version in [KDBXVersion.v3_1, .v4_0] {
            let (file, key, derived) = try Self.smallFile(version: version, cipher: .aes256)
            let buffer = Data(repeating: 0xAB, count: 300) + file + Data(repeating: 0xCD, count: 7)
            let slice = buffer[300..<(300 + file.count)]
            #expect(try KDBXReader.open(slice, key: key, cachedKey: derived).vault.root.entries.count == 1)
            #expect(try KDBXReader.payloadDigest(of: slice, derivedKey: derived) == KDBXReader.payloadDigest(of: file, derivedKey: derived))
            for length in stride(from: 0, to: file.count, by: 7) {
                #expect(throws: KDBXError.self, "slice prefix of \(length) bytes") {
                    try KDBXReader.open(slice.prefix(length), key: key, cachedKey: derived)
                }
            }
        }
    }

    @Test("every single-byte flip is detected", arguments: [(KDBXVersion.v3_1, PayloadCipher.aes256), (.v4_0, .aes256), (.v4_1, .chaCha20)])
    func everyByteFlip(version: KDBXVersion, cipher: PayloadCipher) throws {
        let (file, key, derived) = try Self.smallFile(version: version, cipher: cipher)
        for offset in 0..<file.count {
            var damaged = file
            damaged[offset] ^= 0x01
            // A flip in the header's comment-free fields, seeds or payload must never yield a vault
            // silently different from the original, and must never crash.
            #expect(throws: KDBXError.self, "flip at \(offset) of \(file.count)") {
                try KDBXReader.open(damaged, key: key, cachedKey: derived)
            }
        }
    }

    @Test("wrong password and corruption are told apart")
    func wrongKeyVersusCorruption() throws {
        for version in [KDBXVersion.v3_1, .v4_0] {
            let (file, _, _) = try Self.smallFile(version: version, cipher: .aes256)
            #expect(throws: KDBXError.wrongCredentials) { try KDBXReader.open(file, key: CompositeKey(password: "wrong")) }
            var damaged = file
            damaged[damaged.count - 40] ^= 0xFF
            #expect {
                try KDBXReader.open(damaged, key: CompositeKey(password: "pw"))
            } throws: { error in
                guard let error = error as? KDBXError else { return false }
                return error != .wrongCredentials
            }
        }
    }
}

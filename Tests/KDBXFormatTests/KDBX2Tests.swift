import Foundation
@testable import KDBXFormat
import MyPassCore
import Testing

/// KDBX 2.x (KeePass 2.0x): the 3.x container without the header hash that 3.1 added. Read; a save
/// writes it back as 3.1. (Checked against a real 2.0 file, KeePassXC's Format200.kdbx test vault,
/// which is GPL and so not shipped here: it opens with its entry, both attachments and both history
/// items, and the 3.1 file saved from it reads in keepassxc-cli and pykeepass.)
@Suite("KDBX 2.x: read, written back as 3.1")
struct KDBX2Tests {
    static let key = try! CompositeKey(password: "kdbx2")
    static let settings = FormatSettings(version: .v3_1, cipher: .aes256, kdf: .aesKDF(seed: Data(repeating: 9, count: 32), rounds: 100))

    /// The sample vault in a 2.0 container (no HeaderHash in Meta).
    static func file() throws -> (vault: Vault, file: Data) {
        let vault = SampleVault.make()
        let (file, _) = try KDBXWriter.serialize(vault, settings: settings, key: key, cachedKey: nil, limits: .standard,
                                                 as: KDBXVersion(major: 2, minor: 0))
        return (vault, file)
    }

    @Test("a 2.0 file opens with its whole content")
    func opens() throws {
        let (vault, file) = try Self.file()
        #expect(try KDBXReader.header(of: file).version == KDBXVersion(major: 2, minor: 0))
        let opened = try KDBXReader.open(file, key: Self.key)
        #expect(opened.vault == VersionFit.asStored(vault, writtenAs: KDBXVersion(major: 2, minor: 0)))
        #expect(opened.settings.version == KDBXVersion(major: 2, minor: 0))
    }

    @Test("saving it writes KDBX 3.1 with the same content")
    func savedAs31() throws {
        let opened = try KDBXReader.open(Self.file().file, key: Self.key)
        let (file, _) = try KDBXWriter.serialize(opened.vault, settings: opened.settings, key: Self.key)
        #expect(try KDBXReader.header(of: file).version == .v3_1)
        #expect(try KDBXReader.open(file, key: Self.key).vault == opened.vault)
    }

    @Test("versions other than 2.x, 3.x and 4.x are still refused", arguments: [UInt16(1), 5, 42])
    func otherMajorsRefused(major: UInt16) throws {
        var file = try Self.file().file
        file[10] = UInt8(major & 0xFF)
        file[11] = UInt8(major >> 8)
        #expect(throws: KDBXError.unsupportedVersion("\(major).0")) { try KDBXReader.header(of: file) }
    }
}

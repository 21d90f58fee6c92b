import Foundation
import KDBXFormat
import MyPassCore
import MyPassCrypto
import Testing
import TestSupport

/// Asserts that `tool` sees `vault` in the file at `path` as we do.
private func expectToolAgrees(
    _ tool: ReferenceTools.Tool, path: URL, password: String?, keyFile: URL?, vault: Vault
) throws {
    let theirs = try ReferenceTools.view(tool, path: path, password: password, keyFile: keyFile)
    let differences = VaultView(vault).differences(from: theirs)
    #expect(differences.isEmpty, "\(tool.rawValue) sees the vault differently: \(differences)")
}

/// A scratch directory removed when the test ends.
private func withScratchDirectory<T>(_ body: (URL) throws -> T) throws -> T {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("mypass-interop-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    return try body(directory)
}

/// The format matrix, reduced to what the reference tools can read (pykeepass reads every cell).
private let writtenFormats: [(KDBXVersion, PayloadCipher, String, PayloadCompression)] = {
    var cells: [(KDBXVersion, PayloadCipher, String, PayloadCompression)] = []
    for cipher in PayloadCipher.allCases {
        cells.append((.v3_1, cipher, "aes-kdf", .gzip))
        for kdf in ["aes-kdf", "argon2d", "argon2id"] {
            cells.append((.v4_0, cipher, kdf, kdf == "argon2d" ? .none : .gzip))
        }
    }
    return cells
}()

@Suite("Interop: KeePassXC and pykeepass read what mypass-sync writes", .serialized)
struct InteropTests {
    @Test("every written variant reads the same in keepassxc-cli and pykeepass", arguments: writtenFormats.indices)
    func writtenVariants(index: Int) throws {
        let (version, cipher, kdfName, compression) = writtenFormats[index]
        let salt = Data(repeating: 3, count: 32)
        let kdf: KDFParameters = switch kdfName {
        case "aes-kdf": .aesKDF(seed: salt, rounds: 1000)
        case "argon2d": .argon2(.init(variant: .argon2d, salt: salt, iterations: 2, memoryBytes: 1 << 20, parallelism: 2))
        default: .argon2(.init(variant: .argon2id, salt: salt, iterations: 2, memoryBytes: 1 << 20, parallelism: 2))
        }
        let password = "interöp-pw"
        let key = try CompositeKey(password: password)
        let vault = InteropSample.make()
        let settings = FormatSettings(version: version, cipher: cipher, kdf: kdf, compression: compression)
        let (file, _) = try KDBXWriter.serialize(vault, settings: settings, key: key)
        try withScratchDirectory { directory in
            let path = directory.appendingPathComponent("written.kdbx")
            try file.write(to: path)
            for tool in ReferenceTools.Tool.allCases {
                try expectToolAgrees(tool, path: path, password: password, keyFile: nil, vault: vault)
            }
        }
    }

    @Test("every fixture survives our open -> save -> their open", arguments: try FixtureVault.all())
    func fixturesResaved(fixture: FixtureVault) throws {
        let key = try CompositeKey(password: fixture.credentials.password, keyFileContents: fixture.keyFileBytes())
        let opened = try KDBXReader.open(fixture.bytes(), key: key)
        let (file, _) = try KDBXWriter.serialize(opened.vault, settings: opened.settings, key: key, cachedKey: opened.derivedKey)
        try withScratchDirectory { directory in
            let path = directory.appendingPathComponent(fixture.file)
            try file.write(to: path)
            for tool in ReferenceTools.Tool.allCases {
                try expectToolAgrees(tool, path: path, password: fixture.credentials.password, keyFile: fixture.keyFilePath,
                                     vault: opened.vault)
            }
        }
    }
}

@Suite("Interop: every fixture converted to every KDBX version")
struct ConversionMatrixTests {
    static let conversions: [(FixtureVault, KDBXVersion)] = {
        let fixtures = (try? FixtureVault.all()) ?? []
        return fixtures.flatMap { fixture in [KDBXVersion.v3_1, .v4_0, .v4_1].map { (fixture, $0) } }
    }()

    @Test("every fixture converted to every version: nothing lost, or exactly what the version cannot store left out; read back by us, keepassxc-cli and pykeepass",
          arguments: conversions)
    func fixtureConverted(fixture: FixtureVault, version: KDBXVersion) throws {
        #expect(Self.conversions.count >= 54)
        let key = try CompositeKey(password: fixture.credentials.password, keyFileContents: fixture.keyFileBytes())
        let opened = try KDBXReader.open(fixture.bytes(), key: key)
        var settings = opened.settings
        settings.version = version
        // A cheap KDF of the same kind (3.1: AES-KDF only): the matrix is about content, not key derivation.
        switch settings.kdf {
        case .argon2(var argon2) where version.isKDBX4:
            argon2.memoryBytes = 1 << 20
            argon2.iterations = 2
            settings.kdf = .argon2(argon2)
        default:
            settings.kdf = .aesKDF(seed: Data(repeating: 4, count: 32), rounds: 1000)
        }
        let gaps = VersionFit.gaps(in: opened.vault, settings: settings, writtenAs: version)
        let (fittedVault, fitted) = VersionFit.dropping(unsupportedBy: version, from: opened.vault, settings: settings)
        // A 3.1 file keeps no attachment protection flag: it reads back without them.
        let vault = VersionFit.asStored(fittedVault, writtenAs: version)
        let unflagged = VersionFit.unkeptAttachmentProtection(in: opened.vault, writtenAs: version)
        #expect(unflagged == 0 || version == .v3_1)
        if gaps.isEmpty {
            #expect(fittedVault == opened.vault, "nothing to leave out, yet dropping changed the vault")
        } else {
            #expect(version < .v4_1)
            #expect(VersionFit.gaps(in: vault, settings: fitted, writtenAs: version).isEmpty, "still does not fit: \(gaps)")
        }
        let (file, _) = try KDBXWriter.serialize(fittedVault, settings: fitted, key: key)
        #expect(try KDBXReader.header(of: file).version == version, "written as another version than asked")
        let back = try KDBXReader.open(file, key: key).vault
        #expect(back == vault, "the \(version) file does not read back as the vault written")
        // Both reference readers read every password and attachment of every converted file, 3.1 files
        // made from vaults whose attachments were flagged protected included (written unflagged:
        // `KDBXVersion.keepsAttachmentProtection`).
        try withScratchDirectory { directory in
            let path = directory.appendingPathComponent(fixture.file)
            try file.write(to: path)
            for tool in ReferenceTools.Tool.allCases {
                try expectToolAgrees(tool, path: path, password: fixture.credentials.password, keyFile: fixture.keyFilePath, vault: vault)
            }
        }
    }
}

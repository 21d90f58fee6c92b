import Foundation
@testable import KDBXFormat
import MyPassCore
import Testing
import TestSupport

@Suite("Reading the KeePassXC and pykeepass fixtures")
struct FixtureReadTests {
    static func open(_ fixture: FixtureVault) throws -> OpenedVault {
        let key = try CompositeKey(password: fixture.credentials.password, keyFileContents: fixture.keyFileBytes())
        return try KDBXReader.open(fixture.bytes(), key: key)
    }

    @Test("every fixture opens and its content equals the manifest", arguments: try FixtureVault.all())
    func contentMatchesManifest(fixture: FixtureVault) throws {
        let opened = try Self.open(fixture)
        let view = VaultView(opened.vault)
        #expect(view.groups == fixture.groups.sorted())
        #expect(opened.vault.meta.databaseName == fixture.meta.name)
        #expect(view.meta.recycleBin == fixture.meta.recycleBin)
        #expect(view.deletedObjects == fixture.deletedObjects)
        #expect(view.entries.count == fixture.entries.count)
        for expected in fixture.entries {
            guard let actual = view.entries[expected.uuid] else {
                Issue.record("entry \(expected.uuid) (\(expected.title)) missing")
                continue
            }
            let differences = actual.differences(from: expected)
            #expect(differences.isEmpty, "\(expected.title) differs from the manifest in \(differences)")
        }
    }

    @Test("a wrong password is reported as wrong credentials", arguments: try FixtureVault.all().filter { $0.credentials.password != nil })
    func wrongPassword(fixture: FixtureVault) throws {
        let key = try CompositeKey(password: (fixture.credentials.password ?? "") + "x", keyFileContents: fixture.keyFileBytes())
        #expect(throws: KDBXError.wrongCredentials) { try KDBXReader.open(fixture.bytes(), key: key) }
    }

    @Test("a missing or wrong key file is reported as wrong credentials", arguments: try FixtureVault.all().filter { $0.credentials.keyFile != nil })
    func wrongKeyFile(fixture: FixtureVault) throws {
        if let password = fixture.credentials.password {
            let withoutKeyFile = try CompositeKey(password: password, keyFileContents: nil)
            #expect(throws: KDBXError.wrongCredentials) { try KDBXReader.open(fixture.bytes(), key: withoutKeyFile) }
        }
        let otherKeyFile = try CompositeKey(password: fixture.credentials.password, keyFileContents: Data("other".utf8))
        #expect(throws: KDBXError.wrongCredentials) { try KDBXReader.open(fixture.bytes(), key: otherKeyFile) }
    }

    @Test("an empty password is not the same as no password")
    func emptyPassword() throws {
        let fixture = try FixtureVault.named("py-4.0-empty-password.kdbx")
        #expect(fixture.credentials.password == "")
        _ = try KDBXReader.open(fixture.bytes(), key: CompositeKey(password: ""))
        #expect(throws: KDBXError.self) { try CompositeKey(password: nil as String?) }
    }

    @Test("passwords are not Unicode-normalised")
    func nfdPassword() throws {
        let fixture = try FixtureVault.named("py-4.0-nfd-password.kdbx")
        let nfd = try #require(fixture.credentials.password)
        #expect(Array(nfd.utf8) != Array(nfd.precomposedStringWithCanonicalMapping.utf8))
        _ = try KDBXReader.open(fixture.bytes(), key: CompositeKey(password: nfd))
        #expect(throws: KDBXError.wrongCredentials) {
            try KDBXReader.open(fixture.bytes(), key: CompositeKey(password: nfd.precomposedStringWithCanonicalMapping))
        }
    }

    @Test("a cached derived key is reused for the same credentials and KDF only, never for other credentials")
    func cachedKey() throws {
        let fixture = try #require(try FixtureVault.all().first { $0.format.kdf == "argon2d" })
        let key = try CompositeKey(password: fixture.credentials.password, keyFileContents: fixture.keyFileBytes())
        let first = try Self.open(fixture)
        // Limits that refuse any Argon2 run: only a reused key gets through them.
        let noDerivation = ResourceLimits(maximumArgon2MemoryBytes: 0)
        let reused = try DerivedKey.reusing(first.derivedKey, compositeKey: key, kdf: first.derivedKey.kdf, limits: noDerivation, version: .v4_0)
        #expect(reused.transformedKey == first.derivedKey.transformedKey)
        let second = try KDBXReader.open(fixture.bytes(), key: key, cachedKey: first.derivedKey)
        #expect(second.vault == first.vault)
        // Other credentials with the same salt: the cache is not used, so the KDF would run again.
        let other = try CompositeKey(password: "not the password")
        #expect(throws: KDBXError.self) {
            try DerivedKey.reusing(first.derivedKey, compositeKey: other, kdf: first.derivedKey.kdf, limits: noDerivation, version: .v4_0)
        }
        #expect(throws: KDBXError.wrongCredentials) {
            try KDBXReader.open(fixture.bytes(), key: other, cachedKey: first.derivedKey)
        }
    }
}

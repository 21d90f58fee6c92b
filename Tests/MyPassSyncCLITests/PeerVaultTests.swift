import Foundation
import KDBXFormat
import MyPassCore
import Testing
import TestSupport

/// One vault of `Fixtures/peers/manifest.json`: another project's test vault, its credentials, and
/// what that project expects a reader to do with it.
struct PeerVault: Decodable, Sendable, CustomStringConvertible {
    struct Credentials: Decodable, Sendable {
        let password: String?
        let keyfile: String?
    }

    let id: String
    let file: String
    let credentials: Credentials
    /// `open`, `wrong-credentials`, `unsupported` or `corrupt`.
    let expect: String
    let expectExit: [Int32]

    enum CodingKeys: String, CodingKey {
        case id, file, credentials, expect
        case expectExit = "expect_exit"
    }

    var description: String { id }

    static let directory = FixtureVault.fixturesDirectory.appendingPathComponent("peers")

    static func all() throws -> [PeerVault] {
        struct Manifest: Decodable { let files: [PeerVault] }
        return try JSONDecoder().decode(Manifest.self, from: Data(contentsOf: directory.appendingPathComponent("manifest.json"))).files
    }

    var path: URL { Self.directory.appendingPathComponent(file) }
    var keyFile: URL? { credentials.keyfile.map { Self.directory.appendingPathComponent($0) } }

    /// The command-line credentials for `mypass-sync`, and what goes on standard input.
    var arguments: (options: [String], input: String) {
        var options = credentials.password == nil ? ["--no-password"] : ["--password-stdin"]
        if let keyFile { options += ["--key-file", keyFile.path] }
        return (options, credentials.password.map { $0 + "\n" } ?? "")
    }
}

@Suite("Other projects' test vaults (keepass-rs, kdbxweb, keeweb)")
struct PeerVaultTests {
    @Test("each opens with the content pykeepass sees, or is refused with the exit code its project expects",
          arguments: try PeerVault.all())
    func peerVault(vault: PeerVault) throws {
        let (options, input) = vault.arguments
        let outcome = try ToolRunner.run(["export", "--format", "json"] + options + [vault.path.path], input: input)
        #expect(vault.expectExit.contains(outcome.status), "exit \(outcome.status): \(outcome.standardError)")
        guard vault.expect == "open" else { return }
        let key = try CompositeKey(password: vault.credentials.password,
                                   keyFileContents: vault.keyFile.map { try Data(contentsOf: $0) })
        let ours = try KDBXReader.open(Data(contentsOf: vault.path), key: key).vault
        let theirs = try ReferenceTools.view(.pykeepass, path: vault.path, password: vault.credentials.password, keyFile: vault.keyFile)
        let differences = VaultView(ours).differences(from: theirs)
        #expect(differences.isEmpty, "pykeepass sees it differently: \(differences)")
        #expect(!theirs.entries.isEmpty || ours.root.allEntries().isEmpty)
    }

    @Test("the corpus is complete: every file the manifest names is here, with the licences")
    func corpusIsHere() throws {
        let vaults = try PeerVault.all()
        #expect(vaults.count >= 40)
        for vault in vaults {
            #expect(FileManager.default.fileExists(atPath: vault.path.path), "\(vault.file)")
            if let keyFile = vault.keyFile { #expect(FileManager.default.fileExists(atPath: keyFile.path), "\(keyFile.lastPathComponent)") }
        }
        for licence in ["LICENSE-keepass-rs", "LICENSE-kdbxweb", "LICENSE-keeweb", "SOURCES.md"] {
            #expect(FileManager.default.fileExists(atPath: PeerVault.directory.appendingPathComponent(licence).path), "\(licence)")
        }
    }
}

import Foundation
import MyPassCrypto
import Testing
import TestSupport

/// Challenge-response key components (YubiKey HMAC-SHA1), proven on other projects' vaults and on
/// vaults this tool writes, across saves, with a software secret and with a program that answers.
@Suite("Challenge-response key components (YubiKey HMAC-SHA1)", .serialized)
struct ChallengeResponseTests {
    static let peers = FixtureVault.fixturesDirectory.appendingPathComponent("peers")
    /// kdbxweb's test answers the two vaults' challenges with these responses (test/format/kdbx.spec.ts).
    static let kdbxwebResponses = [
        "011ed85afa703341893596fba2da60b6cacabaa5468a0e9ea74698b901bc89ab": "ae7244b336f3360e4669ec9eaf4ddc23785aef03",
        "0ba4bbdf2e44fe56b64136a5086ba3ab814130d8e3fe7ed0e869cc976af6c12a": "18350f73193e1c89211921d3016bfe3ddfc54d3e",
    ]
    /// keepass-rs's test secret (its `LocalChallenge`).
    static let keepassRsSecret = "0102030405060708090a0b0c0d0e0f1011121314"

    /// A shell script answering kdbxweb's two challenges from its table, and nothing else.
    static func tableCommand(in directory: URL) throws -> String {
        let cases = kdbxwebResponses.map { "\($0.key)) echo \($0.value);;" }.joined(separator: "\n")
        let path = directory.appendingPathComponent("answer.sh").path
        try "#!/bin/sh\nread challenge\ncase $challenge in\n\(cases)\n*) exit 1;;\nesac\n".write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o755)
        return path
    }

    @Test("kdbxweb's YubiKey3 (3.1, Strongbox) and YubiKey4 (4.0, KeePassXC) open with the responses of kdbxweb's test; keepass-rs's with its secret; none without the component (exit 3)")
    func peerVaults() throws {
        let directory = try CLIFixtures.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let command = try Self.tableCommand(in: directory)
        for (file, title) in [("YubiKey3.kdbx", "Sample"), ("YubiKey4.kdbx", "Demo entry")] {
            let path = Self.peers.appendingPathComponent("kdbxweb/resources/\(file)").path
            let opened = try ToolRunner.run(["ls", "-R", path, "--password-stdin", "--challenge-response-command", command], input: "demo\n")
            #expect(opened.status == 0, "\(file): \(opened.standardError)")
            #expect(opened.standardOutput.contains(title), "\(file): \(opened.standardOutput)")
            let without = try ToolRunner.run(["ls", path, "--password-stdin"], input: "demo\n")
            #expect(without.status == 3, "\(file)")
        }
        let secret = directory.appendingPathComponent("secret.hex")
        try Data((Self.keepassRsSecret + "\n").utf8).write(to: secret)
        chmod(secret.path, 0o600)
        let rs = Self.peers.appendingPathComponent("keepass-rs/tests/resources/test_db_with_challenge_response_key.kdbx").path
        let opened = try ToolRunner.run(["ls", rs, "--password-stdin", "--challenge-response-secret", secret.path], input: "demopass\n")
        #expect(opened.status == 0 && opened.standardOutput.contains("entry1"), "\(opened.standardError)")
        let wrongSecret = directory.appendingPathComponent("wrong.hex")
        try Data("0102030405060708090a0b0c0d0e0f1011121315\n".utf8).write(to: wrongSecret)
        chmod(wrongSecret.path, 0o600)
        #expect(try ToolRunner.run(["ls", rs, "--password-stdin", "--challenge-response-secret", wrongSecret.path], input: "demopass\n").status == 3)
        // A YubiKey that is not there: said, exit 3.
        let noKey = try ToolRunner.run(["ls", rs, "--password-stdin", "--yubikey", "2"], input: "demopass\n")
        #expect(noKey.status == 3 && noKey.standardError.contains("no YubiKey found"), "\(noKey.standardError)")
    }

    @Test("a vault made with db-create --challenge-response-secret (4.0, then converted to 3.1) reopens after add, edit and a watcher's merge — every save draws new seeds and asks again — and not without the component; the command provider answers as the secret does",
          arguments: ["4.0", "3.1"])
    func ownVaults(version: String) throws {
        let vault = try ScratchVault()
        defer { vault.remove() }
        let secret = vault.directory.appendingPathComponent("secret.hex")
        try Data((Self.keepassRsSecret + "\n").utf8).write(to: secret)
        chmod(secret.path, 0o600)
        // A program that answers as the key would: HMAC-SHA1 of the challenge under the secret.
        let command = "python3 -c 'import hmac,hashlib,sys; print(hmac.new(bytes.fromhex(\"\(Self.keepassRsSecret)\"), "
            + "bytes.fromhex(sys.stdin.readline().strip()), hashlib.sha1).hexdigest())'"
        let component = ["--challenge-response-secret", secret.path]
        let path = vault.directory.appendingPathComponent("cr.kdbx").path
        #expect(try ToolRunner.run(["db-create", path, "--password-stdin", "-t", "100"] + component, input: "cr-pässword\n").status == 0)
        if version == "3.1" {
            let converted = vault.directory.appendingPathComponent("cr31.kdbx").path
            let outcome = try ToolRunner.run(["convert", path, "-o", converted, "--version", "3.1", "--kdf", "aes-kdf", "--kdf-rounds", "1000",
                                              "--password-stdin"] + component, input: "cr-pässword\n")
            #expect(outcome.status == 0, "\(outcome.standardError)")
            try FileManager.default.removeItem(atPath: path)
            try FileManager.default.moveItem(atPath: converted, toPath: path)
        }
        let state = vault.directory.appendingPathComponent("cr-state").path
        func run(_ arguments: [String], with extra: [String] = component) throws -> ToolRunner.Outcome {
            try ToolRunner.run(arguments + ["--password-stdin", "--state-dir", state] + extra, input: "cr-pässword\n")
        }
        #expect(try run(["add", path, "/First", "-u", "one"]).status == 0)
        #expect(try run(["edit", path, "/First", "-u", "two"], with: ["--challenge-response-command", command]).status == 0)
        // A conflict copy with an edit of its own, folded in by the watcher (one more save).
        let copy = vault.directory.appendingPathComponent("cr.sync-conflict-20261202-101010-ABCDEFG.kdbx").path
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        #expect(try ToolRunner.run(["add", copy, "/From the copy", "--password-stdin", "--state-dir",
                                    vault.directory.appendingPathComponent("copy-state").path] + component, input: "cr-pässword\n").status == 0)
        waitForNextClockSecond()  // the next edit is stamped a second later (KDBX times: whole seconds)
        #expect(try run(["edit", path, "/First", "--url", "https://example.org"]).status == 0)
        let watched = try run(["watch", path, "--once"])
        #expect(watched.status == 0, "\(watched.standardError)")
        let listed = try run(["ls", path])
        #expect(listed.status == 0 && listed.standardOutput.contains("First") && listed.standardOutput.contains("From the copy"),
                "\(listed.standardOutput) \(listed.standardError)")
        #expect(try run(["show", path, "/First"]).standardOutput.contains("UserName: two"))
        #expect(try ToolRunner.run(["info", path]).standardOutput.contains("KDBX \(version)"))
        let without = try run(["ls", path], with: [])
        #expect(without.status == 3, "\(without.standardError)")
    }

    @Test("a secret file open to others, a symlink to one, or one with lenient hex (`+f`) is refused (exit 3) before the vault is opened, as ssh refuses a key")
    func unsafeSecretFiles() throws {
        let vault = try ScratchVault()
        defer { vault.remove() }
        let rs = Self.peers.appendingPathComponent("keepass-rs/tests/resources/test_db_with_challenge_response_key.kdbx").path
        let good = vault.directory.appendingPathComponent("good.hex")
        try Data((Self.keepassRsSecret + "\n").utf8).write(to: good)
        chmod(good.path, 0o600)
        #expect(try ToolRunner.run(["ls", rs, "--password-stdin", "--challenge-response-secret", good.path], input: "demopass\n").status == 0)
        let open = vault.directory.appendingPathComponent("open.hex")
        try FileManager.default.copyItem(at: good, to: open)
        chmod(open.path, 0o640)
        let link = vault.directory.appendingPathComponent("link.hex")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: good.path)
        let lenient = vault.directory.appendingPathComponent("lenient.hex")
        // `+f` reads as 0x0f to a lenient parser: the same secret with one byte written so.
        let digits = Array(Self.keepassRsSecret)
        try Data(("+" + String(digits[1]) + String(digits[2...]) + "\n").utf8).write(to: lenient)
        chmod(lenient.path, 0o600)
        for (file, says) in [(open, "open to others"), (link, "regular file"), (lenient, "not hex digits")] {
            let outcome = try ToolRunner.run(["ls", rs, "--password-stdin", "--challenge-response-secret", file.path], input: "demopass\n")
            #expect(outcome.status == 3, "\(file.lastPathComponent): \(outcome.standardError)")
            #expect(outcome.standardError.contains(says), "\(file.lastPathComponent): \(outcome.standardError)")
        }
    }
}

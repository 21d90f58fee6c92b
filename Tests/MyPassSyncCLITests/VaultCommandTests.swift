import Foundation
import Testing
import TestSupport

/// Fixture paths for the end-to-end tests.
enum CLIFixtures {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures")
    static func vault(_ name: String) -> String { directory.appendingPathComponent("vaults/\(name)").path }
    static func key(_ name: String) -> String { directory.appendingPathComponent("keys/\(name)").path }

    static let kdbx31 = vault("kxc-3.1-aes-aeskdf-gzip.kdbx")
    static let kdbx31Password = "kxc-fixture-pässword"
    static let kdbx4 = vault("py-4.0-aes256-argon2d-gzip.kdbx")
    static let kdbx4Password = "py-fixture-pässword"

    /// A fresh directory for one test's outputs.
    static func scratch() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("mypass-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}

@Suite("mypass-sync info, export, convert (end to end)")
struct VaultCommandTests {
    @Test("one-character relative names (a vault `v`, --state-dir s) work: they used to stop the process with SIGILL")
    func oneCharacterRelativePaths() throws {
        let directory = try CLIFixtures.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.copyItem(atPath: CLIFixtures.kdbx4, toPath: directory.appendingPathComponent("v").path)
        let edited = try ProcessRunner.run(try ToolRunner.binary(), ["edit", "v", "/No URL", "-u", "short-paths", "--password-stdin", "--state-dir", "s"],
                                           input: Data((CLIFixtures.kdbx4Password + "\n").utf8), directory: directory)
        #expect(edited.status == 0, "\(edited.standardError)")
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("s").path))
        let shown = try ProcessRunner.run(try ToolRunner.binary(), ["show", "v", "/No URL", "--password-stdin", "--state-dir", "s/"],
                                          input: Data((CLIFixtures.kdbx4Password + "\n").utf8), directory: directory)
        #expect(String(decoding: shown.standardOutput, as: UTF8.self).contains("short-paths"), "\(shown.standardError)")
    }

    @Test("info prints the header facts without a password")
    func info() throws {
        let outcome = try ToolRunner.run(["info", CLIFixtures.vault("py-4.0-chacha20-argon2id-none.kdbx")])
        #expect(outcome.status == 0)
        #expect(outcome.standardOutput.contains("version:     KDBX 4.0"))
        #expect(outcome.standardOutput.contains("cipher:      chacha20"))
        #expect(outcome.standardOutput.contains("argon2id (iterations 2, memory 1 MiB, parallelism 2"))
        #expect(outcome.standardOutput.contains("compression: none"))
        #expect(outcome.standardOutput.contains("attachments: encrypted with the payload, each with its protection flag"))
        let old = try ToolRunner.run(["info", CLIFixtures.kdbx31])
        #expect(old.standardOutput.contains("KDBX 3.1 keeps no per-attachment protection flag"), "\(old.standardOutput)")
    }

    @Test("info --json has the format keys")
    func infoJSON() throws {
        let outcome = try ToolRunner.run(["info", "--json", CLIFixtures.kdbx31])
        #expect(outcome.status == 0)
        let json = try JSONSerialization.jsonObject(with: Data(outcome.standardOutput.utf8)) as? [String: Any]
        let format = try #require(json?["format"] as? [String: Any])
        #expect(json?["schema"] as? Int == 1)
        #expect(format["version"] as? String == "3.1")
        #expect(format["keepsAttachmentProtection"] as? Bool == false)
        #expect(format["kdf"] as? String == "aes-kdf")
    }

    static let exitCodeCases: [([String], Int32)] = [
        (["info", "/nonexistent/vault.kdbx"], 7),
        (["info", "/tmp"], 7),
        (["info", #filePath], 4),
        (["info"], 2),
        (["info", "--bogus", "x"], 2),
        (["export", "--format", "yaml", "x.kdbx"], 2),
        (["convert", "x.kdbx"], 2),
    ]

    @Test("errors map to the documented exit codes", arguments: exitCodeCases)
    func exitCodes(arguments: [String], expected: Int32) throws {
        let outcome = try ToolRunner.run(arguments)
        #expect(outcome.status == expected)
        #expect(outcome.standardError.hasPrefix("error: "))
        #expect(outcome.standardOutput.isEmpty)
    }

    @Test("a wrong password exits 3 and prints nothing on stdout")
    func wrongPassword() throws {
        let outcome = try ToolRunner.run(["export", "--password-stdin", CLIFixtures.kdbx4], input: "nope\n")
        #expect(outcome.status == 3)
        #expect(outcome.standardOutput.isEmpty)
        #expect(outcome.standardError == "error: wrong password or key file\n")
    }

    @Test("export --format json has CLI.md's keys and the fixture's content")
    func exportJSON() throws {
        let outcome = try ToolRunner.run(["export", "--password-stdin", CLIFixtures.kdbx4], input: CLIFixtures.kdbx4Password + "\n")
        #expect(outcome.status == 0)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(outcome.standardOutput.utf8)) as? [String: Any])
        #expect(Set(json.keys) == ["schema", "format", "meta", "root", "deletedObjects"])
        let meta = try #require(json["meta"] as? [String: Any])
        #expect(Set(meta.keys) == ["name", "recycleBin", "historyMaxItems", "historyMaxSize"])
        let root = try #require(json["root"] as? [String: Any])
        #expect(Set(root.keys) == ["uuid", "name", "notes", "times", "groups", "entries"])
        let groups = try #require(root["groups"] as? [[String: Any]])
        let internet = try #require(groups.first { $0["name"] as? String == "Internet" })
        let github = try #require((internet["entries"] as? [[String: Any]])?.first)
        #expect(Set(github.keys) == ["uuid", "title", "username", "password", "url", "notes", "tags", "fields",
                                     "protected", "attachments", "times", "history"])
        #expect(github["password"] as? String == "gh-Pässwörd-2")
        #expect((github["fields"] as? [String: String])?["API Token"] == "tok-5ecr3t-value")
        #expect(Set(github["protected"] as? [String] ?? []) == ["Password", "API Token"])
        let history = try #require(github["history"] as? [[String: Any]])
        #expect(history.count == 1)
        #expect(history[0]["history"] == nil)
        let times = try #require(github["times"] as? [String: Any])
        #expect(Set(times.keys) == ["created", "modified", "locationChanged", "expires"])
        let uuid = try #require(github["uuid"] as? String)
        #expect(uuid == uuid.lowercased() && uuid.count == 36)
        let attachment = try #require((github["attachments"] as? [[String: Any]])?.first)
        #expect(attachment["name"] as? String == "recovery.txt")
        #expect(attachment["size"] as? Int == 36)
    }

    @Test("export --format xml is a KeePass XML export that reads back")
    func exportXML() throws {
        let outcome = try ToolRunner.run(["export", "--format", "xml", "--password-stdin", CLIFixtures.kdbx31], input: CLIFixtures.kdbx31Password + "\n")
        #expect(outcome.status == 0)
        #expect(outcome.standardOutput.hasPrefix("<?xml version=\"1.0\" encoding=\"UTF-8\""))
        #expect(outcome.standardOutput.contains("<Value ProtectInMemory=\"True\">gh-Pässwörd-1</Value>"))
    }

    @Test("convert writes a 0600 file in the new format that opens with the same password")
    func convert() throws {
        let directory = try CLIFixtures.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("converted.kdbx").path
        let outcome = try ToolRunner.run(
            ["convert", "--password-stdin", CLIFixtures.kdbx31, "-o", output, "--version", "4.0", "--cipher", "twofish",
             "--kdf", "argon2d", "--kdf-memory", "1048576", "--kdf-iterations", "1", "--kdf-parallelism", "2"],
            input: CLIFixtures.kdbx31Password + "\n")
        #expect(outcome.status == 0, "\(outcome.standardError)")
        let attributes = try FileManager.default.attributesOfItem(atPath: output)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let info = try ToolRunner.run(["info", output])
        #expect(info.standardOutput.contains("KDBX 4.0"))
        #expect(info.standardOutput.contains("twofish"))
        #expect(info.standardOutput.contains("argon2d (iterations 1, memory 1 MiB, parallelism 2"))
        let before = try ToolRunner.run(["export", "--password-stdin", CLIFixtures.kdbx31], input: CLIFixtures.kdbx31Password + "\n")
        let after = try ToolRunner.run(["export", "--password-stdin", output], input: CLIFixtures.kdbx31Password + "\n")
        let strip = { (text: String) in text.replacingOccurrences(of: #""format" : \{[^}]*\}"#, with: "", options: .regularExpression) }
        #expect(strip(before.standardOutput) == strip(after.standardOutput))
        #expect(!strip(after.standardOutput).isEmpty)
    }

    @Test("convert refuses impossible combinations before asking for a password", arguments: [
        ["--version", "3.1", "--kdf", "argon2id"],
        ["--kdf", "aes-kdf", "--kdf-iterations", "3"],
        ["--cipher", "rot13"],
        ["--kdf-memory", "1000"],
    ])
    func convertRefuses(extra: [String]) throws {
        let directory = try CLIFixtures.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("never.kdbx").path
        let outcome = try ToolRunner.run(["convert", "--password-stdin", CLIFixtures.kdbx31, "-o", output] + extra,
                                         input: CLIFixtures.kdbx31Password + "\n")
        #expect(outcome.status == 2)
        #expect(!FileManager.default.fileExists(atPath: output))
    }

    @Test("convert --version 3.1 of a vault with KDBX 4.1 content: refused naming it (exit 6, nothing written); with --drop-unsupported a 3.1 file without exactly that, each item listed")
    func convertDownRefusesOrDrops() throws {
        let directory = try CLIFixtures.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = CLIFixtures.vault("kxc-4.x-chacha20-argon2id-gzip.kdbx")
        let output = directory.appendingPathComponent("old.kdbx").path
        let refused = try ToolRunner.run(["convert", "--password-stdin", source, "-o", output, "--version", "3.1"],
                                         input: CLIFixtures.kdbx4Password + "\n")
        #expect(refused.status == 6, "\(refused.standardError)")
        #expect(refused.standardError.contains("PreviousParentGroup") && refused.standardError.contains("--drop-unsupported"))
        #expect(!FileManager.default.fileExists(atPath: output))
        let dropped = try ToolRunner.run(["convert", "--password-stdin", source, "-o", output, "--version", "3.1", "--drop-unsupported"],
                                         input: CLIFixtures.kdbx4Password + "\n")
        #expect(dropped.status == 0, "\(dropped.standardError)")
        #expect(dropped.standardOutput.contains("KDBX 3.1"))
        #expect(dropped.standardOutput.contains("dropped: PreviousParentGroup"))
        #expect(dropped.standardOutput.contains("attachment(s) flagged protected: KDBX 3.1 keeps no per-attachment protection flag"),
                "\(dropped.standardOutput)")
        let info = try ToolRunner.run(["info", output])
        #expect(info.standardOutput.contains("KDBX 3.1"), "\(info.standardOutput)")
        let listed = try ToolRunner.run(["ls", "-R", "--password-stdin", output], input: CLIFixtures.kdbx4Password + "\n")
        #expect(listed.status == 0 && listed.standardOutput.contains("GitHub"))
    }

    @Test("key-file-only vaults open with --no-password --key-file")
    func keyFileOnly() throws {
        let outcome = try ToolRunner.run(["export", "--no-password", "--key-file", CLIFixtures.key("binary32.key"),
                                          CLIFixtures.vault("py-4.0-keyfile-only-binary32.kdbx")])
        #expect(outcome.status == 0, "\(outcome.standardError)")
        #expect(outcome.standardOutput.contains("\"gh-Pässwörd-2\""))
    }
}

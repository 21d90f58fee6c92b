import Foundation
import Testing
import TestSupport

@Suite("mypass-sync merge and diff (end to end)", .serialized)
struct MergeCommandTests {
    /// Three copies of a KeePassXC fixture: base, laptop (username edited with keepassxc-cli), phone
    /// (password edited with keepassxc-cli).
    static func replicas() throws -> URL {
        let directory = try CLIFixtures.scratch()
        let fixture = try FixtureVault.named("kxc-3.1-aes-aeskdf-gzip.kdbx")
        for name in ["base.kdbx", "laptop.kdbx", "phone.kdbx"] {
            try FileManager.default.copyItem(at: fixture.path, to: directory.appendingPathComponent(name))
        }
        let password = CLIFixtures.kdbx31Password
        func keepassxc(_ arguments: [String], _ extra: String = "") throws {
            let outcome = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), ["keepassxc-cli"] + arguments,
                                                input: Data((password + "\n" + extra).utf8), environment: ["QT_QPA_PLATFORM": "offscreen"])
            #expect(outcome.status == 0, "\(outcome.standardError)")
        }
        try keepassxc(["edit", "-q", "-u", "alice-laptop", directory.appendingPathComponent("laptop.kdbx").path, "Internet/GitHub"])
        try keepassxc(["edit", "-q", "-p", directory.appendingPathComponent("phone.kdbx").path, "Internet/GitHub"], "phone-pw\n")
        return directory
    }

    @Test("merge --dry-run reviews the changes and writes nothing; merge writes; merging again changes nothing")
    func mergeFlow() throws {
        let directory = try Self.replicas()
        defer { try? FileManager.default.removeItem(at: directory) }
        let laptop = directory.appendingPathComponent("laptop.kdbx").path
        let phone = directory.appendingPathComponent("phone.kdbx").path
        let base = directory.appendingPathComponent("base.kdbx").path
        let before = try Data(contentsOf: URL(fileURLWithPath: laptop))
        let dry = try ToolRunner.run(["merge", "--password-stdin", "--dry-run", "--exit-code", "--base", base, laptop, phone],
                                     input: CLIFixtures.kdbx31Password + "\n")
        #expect(dry.status == 1)
        #expect(dry.standardOutput.contains("~ updated entry /Internet/GitHub: Password"))
        #expect(dry.standardOutput.contains("dry run: nothing written"))
        #expect(!dry.standardOutput.contains("phone-pw"), "a secret reached the output")
        #expect(try Data(contentsOf: URL(fileURLWithPath: laptop)) == before)

        let real = try ToolRunner.run(["merge", "--password-stdin", "--base", base, laptop, phone], input: CLIFixtures.kdbx31Password + "\n")
        #expect(real.status == 0, "\(real.standardError)")
        #expect(real.standardOutput.contains("wrote \(laptop)"))
        let export = try ToolRunner.run(["export", "--password-stdin", laptop], input: CLIFixtures.kdbx31Password + "\n")
        #expect(export.standardOutput.contains("\"username\" : \"alice-laptop\""))
        #expect(export.standardOutput.contains("\"password\" : \"phone-pw\""))

        let again = try ToolRunner.run(["merge", "--password-stdin", "--exit-code", "--json", "--base", base, laptop, phone],
                                       input: CLIFixtures.kdbx31Password + "\n")
        #expect(again.status == 0)
        let json = try JSONSerialization.jsonObject(with: Data(again.standardOutput.utf8)) as? [String: Any]
        let sections = try #require(json?["sections"] as? [[String: Any]])
        #expect((sections.first?["changes"] as? [Any])?.isEmpty == true)
        #expect(json?["schema"] as? Int == 1)
    }

    @Test("merge -o writes a new file and leaves the local one alone; several remotes at once")
    func mergeToOutput() throws {
        let directory = try Self.replicas()
        defer { try? FileManager.default.removeItem(at: directory) }
        let base = directory.appendingPathComponent("base.kdbx").path
        let out = directory.appendingPathComponent("out.kdbx").path
        let result = try ToolRunner.run(["merge", "--password-stdin", base, directory.appendingPathComponent("laptop.kdbx").path,
                                         directory.appendingPathComponent("phone.kdbx").path, "-o", out],
                                        input: CLIFixtures.kdbx31Password + "\n")
        #expect(result.status == 0, "\(result.standardError)")
        #expect(FileManager.default.fileExists(atPath: out))
        let diff = try ToolRunner.run(["diff", "--password-stdin", "--exit-code", base, out], input: CLIFixtures.kdbx31Password + "\n")
        #expect(diff.status == 1)
        #expect(diff.standardOutput.contains("~ updated entry /Internet/GitHub: Password, UserName"))
        #expect(!diff.standardOutput.contains("phone-pw"))
    }

    @Test("a remote that the credentials do not open stops the merge with exit 6 and writes nothing")
    func keyRotated() throws {
        let directory = try Self.replicas()
        defer { try? FileManager.default.removeItem(at: directory) }
        let laptop = directory.appendingPathComponent("laptop.kdbx").path
        let before = try Data(contentsOf: URL(fileURLWithPath: laptop))
        let rotated = directory.appendingPathComponent("rotated.kdbx")
        try FileManager.default.copyItem(atPath: CLIFixtures.kdbx4, toPath: rotated.path)
        let result = try ToolRunner.run(["merge", "--password-stdin", laptop, rotated.path], input: CLIFixtures.kdbx31Password + "\n")
        #expect(result.status == 6)
        #expect(result.standardError.contains("does not open with these credentials"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: laptop)) == before)
    }

    @Test("two different databases are not merged (exit 6)")
    func differentDatabases() throws {
        let directory = try CLIFixtures.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let one = directory.appendingPathComponent("one.kdbx").path
        try FileManager.default.copyItem(atPath: CLIFixtures.kdbx31, toPath: one)
        let result = try ToolRunner.run(["merge", "--password-stdin", one, CLIFixtures.vault("kxc-4.1-recycled.kdbx")],
                                        input: CLIFixtures.kdbx31Password + "\n")
        #expect(result.status == 6)
        #expect(result.standardError.contains("different databases"))
    }

    @Test("usage errors exit 2", arguments: [["merge", "only-one.kdbx"], ["diff", "a.kdbx"], ["merge", "--bogus", "a", "b"]])
    func usage(arguments: [String]) throws {
        #expect(try ToolRunner.run(arguments).status == 2)
    }
}

@Suite("merge adopts a master key changed on another device (MERGE.md rule 13)", .serialized)
struct KeyRotationMergeTests {
    @Test("the remote's newer key, when given, becomes the merged vault's key")
    func adoptsNewerKey() throws {
        let directory = try CLIFixtures.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let local = directory.appendingPathComponent("local.kdbx").path
        let remote = directory.appendingPathComponent("remote.kdbx").path
        try FileManager.default.copyItem(atPath: CLIFixtures.kdbx31, toPath: local)
        try FileManager.default.copyItem(atPath: CLIFixtures.kdbx31, toPath: remote)
        let old = CLIFixtures.kdbx31Password, new = "rotated-pässword"
        waitForNextClockSecond()  // MasterKeyChanged has a one-second resolution.
        let rekey = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), ["keepassxc-cli", "db-edit", "-q", "-p", remote],
                                          input: Data((old + "\n" + new + "\n" + new + "\n").utf8), environment: ["QT_QPA_PLATFORM": "offscreen"])
        #expect(rekey.status == 0, "\(rekey.standardError)")
        let state = directory.appendingPathComponent("state").path
        let merged = try ToolRunner.run(["merge", "--password-stdin", "--remote-password-stdin", "--state-dir", state, local, remote],
                                        input: old + "\n" + new + "\n")
        #expect(merged.status == 0, "\(merged.standardError)")
        #expect(merged.standardOutput.contains("written with that key"))
        #expect(try ToolRunner.run(["export", "--password-stdin", local], input: new + "\n").status == 0)
        #expect(try ToolRunner.run(["export", "--password-stdin", local], input: old + "\n").status == 3)
    }
}

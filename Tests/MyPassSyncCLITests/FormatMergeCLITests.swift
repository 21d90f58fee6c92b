import Foundation
import Testing
import TestSupport

/// A vault made with keepassxc-cli (KDBX 3.1, AES, AES-KDF) whose copy was switched to ChaCha20 and
/// Argon2id on another device (`convert`: keepassxc-cli 2.7.4's `db-edit` changes only credentials):
/// `merge` writes the switched format in both directions, with and without a base, says so, and
/// merging the result again changes nothing (MERGE.md rule 13).
@Suite("merge: cipher and KDF changed on one device", .serialized)
struct FormatMergeCLITests {
    static let password = "format-pässword"

    /// `keepassxc-cli ARGUMENTS…` with the password on stdin (`times`: how often it is asked).
    static func keepassxc(_ arguments: [String], times: Int = 1) throws -> ProcessRunner.Outcome {
        try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), ["keepassxc-cli"] + arguments,
                              input: Data(String(repeating: password + "\n", count: times).utf8), environment: ["QT_QPA_PLATFORM": "offscreen"])
    }

    /// The cipher and KDF lines of `keepassxc-cli db-info`.
    static func cipherAndKDF(_ path: String) throws -> [String] {
        try keepassxc(["db-info", "-q", path]).output.split(separator: "\n").map(String.init)
            .filter { $0.hasPrefix("Cipher:") || $0.hasPrefix("KDF:") }
    }

    static func mypass(_ arguments: [String], state: URL) throws -> ToolRunner.Outcome {
        try ToolRunner.run(arguments + ["--password-stdin", "--state-dir", state.path], input: password + "\n")
    }

    @Test("merge L R and merge R L both write R's ChaCha20 and Argon2id", arguments: [false, true])
    func oneSidedSwitchTravels(withBase: Bool) throws {
        let directory = try CLIFixtures.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
        let created = try Self.keepassxc(["db-create", "-q", "-p", "-t", "100", path("base.kdbx")], times: 2)
        #expect(created.status == 0, "\(created.standardError)")
        #expect(try Self.keepassxc(["add", "-q", path("base.kdbx"), "Site", "-u", "alice"]).status == 0)
        let original = try Self.cipherAndKDF(path("base.kdbx"))
        #expect(original == ["Cipher: AES 256-bit"] + original.dropFirst() && original.last?.hasPrefix("KDF: AES") == true, "\(original)")
        let switched = try ToolRunner.run(["convert", path("base.kdbx"), "-o", path("R.kdbx"), "--version", "4.0", "--cipher", "chacha20",
                                           "--kdf", "argon2id", "--kdf-memory", "16777216", "--kdf-iterations", "2", "--password-stdin"],
                                          input: Self.password + "\n")
        #expect(switched.status == 0, "\(switched.standardError)")
        let expected = try Self.cipherAndKDF(path("R.kdbx"))
        #expect(expected == ["Cipher: ChaCha20 256-bit", "KDF: Argon2id (2 rounds, 16384 KB)"], "\(expected)")
        for name in ["L.kdbx", "L-copy.kdbx", "R-copy.kdbx"] {
            try FileManager.default.copyItem(atPath: path(name.hasPrefix("R") ? "R.kdbx" : "base.kdbx"), toPath: path(name))
        }
        let base = withBase ? ["--base", path("base.kdbx")] : []
        for (index, (vault, other)) in [("L.kdbx", "R-copy.kdbx"), ("R.kdbx", "L-copy.kdbx")].enumerated() {
            let state = directory.appendingPathComponent("state-\(index)")
            let merged = try Self.mypass(["merge", path(vault), path(other)] + base, state: state)
            #expect(merged.status == 0, "\(merged.standardError)")
            #expect(merged.standardOutput.contains("written with chacha20, argon2id"), "\(vault) <- \(other): \(merged.standardOutput)")
            #expect(try Self.cipherAndKDF(path(vault)) == expected, "\(vault) <- \(other), base \(withBase)")
            // Merging the result again with either input changes nothing: no setting flips back.
            for input in ["R-copy.kdbx", "L-copy.kdbx"] {
                let again = try Self.mypass(["merge", path(vault), path(input)] + base, state: state)
                #expect(again.status == 0 && again.standardOutput.contains("unchanged"), "\(vault) <- \(input) again: \(again.standardOutput)")
                #expect(try Self.cipherAndKDF(path(vault)) == expected)
            }
        }
    }
}

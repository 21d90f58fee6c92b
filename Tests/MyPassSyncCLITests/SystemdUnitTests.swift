import Foundation
import Testing
import TestSupport

/// The shipped systemd user unit: valid for this machine's systemd (252 on Debian 12), and its
/// command line works as written, with the password from the desktop keyring.
@Suite("The systemd user unit (contrib/systemd)", .serialized)
struct SystemdUnitTests {
    static let unit = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("contrib/systemd/mypass-sync-watch@.service")

    /// The unit's text with `mypass-sync` replaced by the built binary (it is not installed here).
    static func unitText() throws -> String {
        try String(contentsOf: unit, encoding: .utf8)
            .replacingOccurrences(of: "ExecStart=mypass-sync ", with: "ExecStart=\(try ToolRunner.binary().path) ")
    }

    /// `systemd-analyze verify --user` of an instance of `text` saved as `name@.service`.
    static func verify(_ text: String, name: String) throws -> ProcessRunner.Outcome {
        let directory = try CLIFixtures.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let runtime = directory.appendingPathComponent("run")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try text.write(to: directory.appendingPathComponent("\(name)@.service"), atomically: true, encoding: .utf8)
        return try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/systemd-analyze"), ["verify", "--user", "--man=no", "\(name)@tmp-v.kdbx.service"],
                                     environment: ["XDG_RUNTIME_DIR": runtime.path, "SYSTEMD_UNIT_PATH": directory.path + ":"])
    }

    @Test("systemd-analyze verify accepts the unit (and refuses it with its ExecStart misspelt, so the check is real)")
    func verifies() throws {
        let text = try Self.unitText()
        #expect(!text.contains("LoadCredentialEncrypted"), "encrypted credentials are not open to user units on systemd 252")
        let good = try Self.verify(text, name: "mypass-sync-watch")
        #expect(good.status == 0, "\(good.standardError)")
        let bad = try Self.verify(text.replacingOccurrences(of: "ExecStart=", with: "ExecStrat="), name: "broken")
        #expect(bad.status != 0)
    }

    @Test("the unit's ExecStart, run as written for an instance (with --once), watches the vault with the password from the keyring")
    func commandLineRuns() throws {
        let text = try Self.unitText()
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("ExecStart=") })
        let session = try SecretServiceSession()
        defer { session.stop() }
        let vault = try ScratchVault()
        defer { vault.remove() }
        #expect(try ToolRunner.run(["keyring", "store", vault.vault, "--password-stdin"], input: ScratchVault.password + "\n",
                                   environment: session.environment).status == 0)
        // %f: the instance name unescaped, with a leading slash: the vault's absolute path.
        var words = line.dropFirst("ExecStart=".count).split(separator: " ").map(String.init)
        #expect(words.contains("%f") && words.contains("--password-from") && !words.contains("--password-stdin"))
        words = words.map { $0 == "%f" ? vault.vault : $0 }
        words.insert("--once", at: try #require(words.firstIndex(of: "watch")) + 1)
        let outcome = try ProcessRunner.run(URL(fileURLWithPath: words[0]), Array(words.dropFirst()) + ["--state-dir", vault.stateDirectory],
                                            environment: session.environment)
        #expect(outcome.status == 0, "\(outcome.standardError)")
    }
}

import Foundation
import Testing
import TestSupport

/// The shipped systemd user units: valid for this machine's systemd (252 on Debian 12), sandboxed
/// (rated below 5 by `systemd-analyze security`), and the watcher's command line works as written,
/// with the password from the desktop keyring.
@Suite("The systemd user unit (contrib/systemd)", .serialized)
struct SystemdUnitTests {
    static let unit = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("contrib/systemd/mypass-sync-watch@.service")

    /// The daemon's unit.
    static let daemonUnit = unit.deletingLastPathComponent().appendingPathComponent("mypass-sync.service")

    /// The highest exposure `systemd-analyze security` may give a shipped unit.
    static let highestExposure = 5.0

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
        #expect(good.standardError.isEmpty, "a setting systemd ignores is only a warning: \(good.standardError)")
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

    @Test("systemd-analyze security --offline rates each unit below 5 (the sandbox is complete enough)",
          arguments: [SystemdUnitTests.unit, SystemdUnitTests.daemonUnit])
    func sandboxExposure(of file: URL) throws {
        let runtime = try CLIFixtures.scratch()
        defer { try? FileManager.default.removeItem(at: runtime) }
        chmod(runtime.path, 0o700)
        let outcome = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/systemd-analyze"),
                                            ["security", "--user", "--offline=yes", "--no-pager", file.path],
                                            environment: ["XDG_RUNTIME_DIR": runtime.path])
        let text = outcome.output
        let line = try #require(text.split(separator: "\n").first { $0.contains("Overall exposure level") }, "\(outcome.standardError)")
        let score = try #require(line.split(separator: ":").last?.split(separator: " ").first.flatMap { Double($0) }, "\(line)")
        print("\(file.lastPathComponent): exposure \(score)")
        #expect(score < Self.highestExposure, "\(line)\n\(text.split(separator: "\n").filter { $0.hasPrefix("✗") }.joined(separator: "\n"))")
    }
}

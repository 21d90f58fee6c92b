import Foundation
import Testing
import TestSupport

/// `git log -p` runs the textconv on every version of the vault: a password that a client stored
/// without the protected flag (KeePass 2 with its memory protection for passwords off, pykeepass, a
/// script) is masked like a protected one (real git, the flag cleared by pykeepass).
@Suite("git: textconv masks an unprotected password (real git, pykeepass)", .serialized)
struct GitTextconvSecretTests {
    static let unprotectedPassword = "UNPROTECTED-PASSWORD-42"

    @Test("a password pykeepass stored without Protected=True never reaches git log -p or git diff")
    func unprotectedPasswordMasked() throws {
        let repos = try GitDriverTests.Repositories()
        let (a, _) = try GitDriverTests.pair(repos)
        let vault = a.appendingPathComponent("vault.kdbx").path
        let script = """
            import sys
            from pykeepass import PyKeePass
            kp = PyKeePass(sys.argv[1], password=sys.stdin.readline().rstrip("\\n"))
            entry = kp.find_entries(title="No URL", first=True)
            entry._set_string_field("Password", sys.argv[2], protected=False)
            kp.save()
            """
        let edited = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", script, vault, Self.unprotectedPassword],
                                           input: Data((ScratchVault.password + "\n").utf8))
        #expect(edited.status == 0, "\(edited.standardError)")
        let raw = try String(decoding: ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", """
            import sys
            from pykeepass import PyKeePass
            kp = PyKeePass(sys.argv[1], password=sys.stdin.readline().rstrip("\\n"))
            print(kp.find_entries(title="No URL", first=True)._element.find("String[Key='Password']/Value").attrib.get("Protected", "unset"))
            """, vault], input: Data((ScratchVault.password + "\n").utf8)).standardOutput, as: UTF8.self)
        #expect(raw.trimmingCharacters(in: .whitespacesAndNewlines) == "False", "the password was not stored unprotected: \(raw)")
        let diff = String(decoding: try repos.git(["diff", "--", "vault.kdbx"], in: a).standardOutput, as: UTF8.self)
        try repos.git(["commit", "-q", "-am", "unprotected password"], in: a)
        let log = String(decoding: try repos.git(["log", "-p", "--", "vault.kdbx"], in: a).standardOutput, as: UTF8.self)
        #expect(!log.contains("Binary files"), "textconv was not used")
        let shown = String(decoding: try repos.git(["show", "--textconv", "HEAD:vault.kdbx"], in: a).standardOutput, as: UTF8.self)
        #expect(shown.contains("entry /No URL") && shown.contains("  Password: ******** (protected)"), "textconv was not used: \(shown)")
        #expect(!(diff + log + shown).contains(Self.unprotectedPassword), "git printed the unprotected password")
    }
}

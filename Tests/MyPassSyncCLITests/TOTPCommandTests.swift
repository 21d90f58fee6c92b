import Foundation
import KDBXFormat
import MyPassCore
import Testing
import TestSupport

@Suite("mypass-sync totp (end to end, and against keepassxc-cli)")
struct TOTPCommandTests {
    static let uri = "otpauth://totp/Example:alice?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=Example"

    /// A vault (password "pw") with a "Login" entry holding `fields`.
    static func vault(_ fields: [String: String], in directory: URL) throws -> String {
        var vault = Vault.empty(name: "otp", at: Timestamp(unixSeconds: 1_700_000_000))
        vault = try vault.addingEntry(title: "Login", password: "x", to: vault.root.uuid, at: Timestamp(unixSeconds: 1_700_000_000)).vault
        let id = vault.root.entries[0].uuid
        vault = try vault.updatingEntry(id, at: Timestamp(unixSeconds: 1_700_000_001)) { entry in
            for (key, value) in fields { entry.setField(key, FieldValue(value, isProtected: true)) }
        }
        let settings = FormatSettings(version: .v4_0, cipher: .aes256, kdf: .aesKDF(seed: Data(count: 32), rounds: 10))
        let path = directory.appendingPathComponent("otp.kdbx").path
        try KDBXWriter.serialize(vault, settings: settings, key: CompositeKey(password: "pw")).file.write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test("the code at a given time (RFC 6238's secret) as text and JSON")
    func fixedTime() throws {
        let directory = try CLIFixtures.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try Self.vault(["otp": Self.uri], in: directory)
        let text = try ToolRunner.run(["totp", "--password-stdin", "--time", "59", path, "/Login"], input: "pw\n")
        #expect(text.status == 0, "\(text.standardError)")
        #expect(text.standardOutput.hasPrefix("287082  (1 s left)"))
        let json = try ToolRunner.run(["totp", "--json", "--password-stdin", "--time", "1111111109", path, "/Login"], input: "pw\n")
        let object = try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any]
        #expect(object?["code"] as? String == "081804" && object?["period"] as? Int == 30 && object?["algorithm"] as? String == "SHA1")
    }

    @Test("keepassxc-cli shows the same current code for the same entry")
    func sameAsKeePassXC() throws {
        let directory = try CLIFixtures.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try Self.vault(["otp": Self.uri], in: directory)
        for _ in 0..<3 {
            // Both read within one 30-second period (retried when the period turns in between).
            let ours = try ToolRunner.run(["totp", "--json", "--password-stdin", path, "/Login"], input: "pw\n")
            let theirs = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), ["keepassxc-cli", "show", "-q", "-t", path, "Login"],
                                               input: Data("pw\n".utf8), environment: ["QT_QPA_PLATFORM": "offscreen"])
            let object = try JSONSerialization.jsonObject(with: Data(ours.standardOutput.utf8)) as? [String: Any]
            guard let remaining = object?["secondsRemaining"] as? Int, remaining > 3 else {
                // The period turns within 3 s: read again in the next one.
                waitUntil("the next 30-second period", timeout: 10) { Int(Date().timeIntervalSince1970) % 30 < 25 }
                continue
            }
            #expect(theirs.status == 0, "\(theirs.standardError)")
            #expect(theirs.output.trimmingCharacters(in: .whitespacesAndNewlines) == object?["code"] as? String)
            return
        }
        Issue.record("could not read both codes within one period")
    }

    @Test("an entry without one, or with a broken one, is a usage error (exit 2) with the reason")
    func missingOrBroken() throws {
        let directory = try CLIFixtures.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let plain = try Self.vault([:], in: directory)
        let none = try ToolRunner.run(["totp", "--password-stdin", plain, "/Login"], input: "pw\n")
        #expect(none.status == 2 && none.standardError.contains("no one-time password"))
        let broken = try Self.vault(["otp": "otpauth://totp/x?secret=***"], in: directory)
        let bad = try ToolRunner.run(["totp", "--password-stdin", broken, "/Login"], input: "pw\n")
        #expect(bad.status == 2 && bad.standardError.contains("Base32"), "\(bad.standardError)")
    }
}

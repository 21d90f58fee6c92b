import Foundation
import Testing
import MyPassCore
import MyPassSync

/// `git textconv`'s text holds no one-time-password secret, whatever field or flag it is kept under,
/// and no name or value can forge a line.
@Suite("textconv: secrets masked, names escaped")
struct VaultTextConversionTests {
    static let secrets = ["JBSWY3DPEHPK3PXP", "GEZDGNBVGY3TQOJQ", "3132333435363738", "c2VjcmV0LWJhc2U2NA==", "KRSXG5CTMVRXEZLU"]

    static func vault(fields: [(String, String)], title: String = "Mail") -> Vault {
        let now = Timestamp.now()
        let entry = Entry(uuid: UUID(), times: Times(allAt: now), fields: [EntryField(key: EntryField.title, value: FieldValue(title, isProtected: false))]
                          + fields.map { EntryField(key: $0.0, value: FieldValue($0.1, isProtected: false)) })
        return Vault(meta: Meta(), root: Group(uuid: UUID(), name: "Root", times: Times(allAt: now), entries: [entry]))
    }

    @Test("unprotected TOTP secrets in KeePass's, KeePassXC's and any field holding an otpauth URI are masked")
    func totpSecretsMasked() {
        let text = VaultTextConversion.text(of: Self.vault(fields: [
            ("TimeOtp-Secret-Base32", Self.secrets[0]), ("TOTP Seed", Self.secrets[1]), ("TimeOtp-Secret-Hex", Self.secrets[2]),
            ("HmacOtp-Secret-Base64", Self.secrets[3]), ("Second factor", "otpauth://totp/Mail:me?secret=\(Self.secrets[4])&issuer=Mail"),
            ("URL", "https://mail.example"),
        ]))
        for secret in Self.secrets { #expect(!text.contains(secret), "\(secret) shown:\n\(text)") }
        #expect(text.contains("  TimeOtp-Secret-Base32: ******** (protected)") && text.contains("  Second factor: ******** (protected)"), "\(text)")
        #expect(text.contains("  URL: https://mail.example"), "an ordinary value is shown")
    }

    @Test("a line break or control character in a field name, a title or a value cannot forge a line")
    func namesEscaped() {
        let text = VaultTextConversion.text(of: Self.vault(fields: [("Note\n  Password: forged-by-name", "x"), ("Plain", "v\n  Password: forged-by-value\u{1b}[2J")],
                                                           title: "Title\nentry /Forged"))
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(!lines.contains { $0.hasPrefix("  Password: forged") }, "\(text)")
        #expect(!lines.contains { $0.hasPrefix("entry /Forged") }, "\(text)")
        #expect(!text.unicodeScalars.contains { $0.value == 0x1b })
    }
}

import Foundation
import Testing
import MyPassCore
import MyPassSync
import MyPassCrypto
import TestSupport

/// `git textconv`'s text holds no secret (a password, a one-time-password secret, a browser form
/// value), whatever field or flag it is kept under, and no name or value can forge or reorder a line.
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

    @Test("the password and every field the vault's memory protection covers are masked whatever their flag; browser form fields too")
    func secretsMaskedWithoutFlag() {
        var vault = Self.vault(fields: [("Password", "UNPROTECTED-PASSWORD-42"), ("UserName", "alice-private"), ("URL", "https://mail.example"),
                                        ("KPRPC JSON", "{\"formFieldList\":[{\"value\":\"FORM-SECRET-7\"}]}"), ("KPH: pin", "PIN-8812")])
        vault.meta.memoryProtection.protectUserName = true
        let text = VaultTextConversion.text(of: vault)
        for secret in ["UNPROTECTED-PASSWORD-42", "alice-private", "FORM-SECRET-7", "PIN-8812"] {
            #expect(!text.contains(secret), "\(secret) shown:\n\(text)")
        }
        #expect(text.contains("  Password: ******** (protected)") && text.contains("  UserName: ******** (protected)"), "\(text)")
        #expect(text.contains("  URL: https://mail.example"), "an ordinary value is shown")
    }

    @Test("an attachment is listed by name and size, with no digest of its content that would confirm a guess")
    func attachmentsWithoutDigest() throws {
        var vault = Self.vault(fields: [])
        let pin = Data("4711".utf8)
        vault = try vault.attaching(pin, named: "pin.txt", to: vault.root.entries[0].uuid)
        let text = VaultTextConversion.text(of: vault)
        #expect(text.contains("  attachment: pin.txt (4 bytes)"), "\(text)")
        let digest = SHA256.hexHash(pin)
        for length in [8, 12, 16] { #expect(!text.contains(digest.prefix(length)), "a digest of the attachment is shown:\n\(text)") }
    }

    /// The characters that break a line, move the cursor or reorder a line's display.
    static let hostileScalars: [Unicode.Scalar] = ["\n", "\r", "\u{0B}", "\u{0C}", "\u{1B}", "\u{7F}", "\u{85}", "\u{9B}", "\u{2028}", "\u{2029}",
                                                  "\u{202A}", "\u{202B}", "\u{202D}", "\u{202E}", "\u{2066}", "\u{2067}", "\u{2068}", "\u{2069}",
                                                  "\u{200E}", "\u{200F}", "\u{061C}", "\u{200B}", "\u{FEFF}"]

    @Test("generated names and values with controls, separators and bidirectional overrides: every line holds one property, none of them raw", arguments: 0..<40)
    func generatedNamesStayInert(seed: UInt64) {
        var random = SeededRandom(seed: 0x7E47 &+ seed)
        let ordinary: [Unicode.Scalar] = ["a", "Z", "7", " ", "/", ":", "é", "ß", "\\", "界"]
        func text() -> String {
            var scalars = String.UnicodeScalarView()
            for _ in 0..<Int.random(in: 1...24, using: &random) {
                scalars.append(Bool.random(using: &random) ? Self.hostileScalars.randomElement(using: &random)! : ordinary.randomElement(using: &random)!)
            }
            return String(scalars)
        }
        let fields = (0..<4).map { _ in ("F " + text(), text()) }
        let title = text()
        let converted = VaultTextConversion.text(of: Self.vault(fields: fields, title: title))
        let forbidden = Set(Self.hostileScalars.filter { $0 != "\n" })
        #expect(!converted.unicodeScalars.contains { forbidden.contains($0) }, "seed \(seed): a raw control or override in:\n\(converted)")
        // One line per property: the database, the root group, the entry, its uuid, its 4 fields, modified, history, deletions.
        #expect(converted.split(separator: "\n").count == 11, "seed \(seed): a line was forged:\n\(converted)")
        #expect(converted.contains("entry /" + InertText.escaped(VaultPath.escaped(title)) + "\n"), "seed \(seed): the title is not shown escaped")
    }

    @Test("escaping is reversible in effect: two different texts never escape to the same line", arguments: 0..<20)
    func escapingKeepsTextsApart(seed: UInt64) {
        var random = SeededRandom(seed: 0xE5C4 &+ seed)
        let alphabet: [Unicode.Scalar] = Self.hostileScalars + ["\\", "u", "{", "}", "a", "n", "2", "8"]
        var seen: [String: String] = [:]
        for _ in 0..<300 {
            var scalars = String.UnicodeScalarView()
            for _ in 0..<Int.random(in: 0...6, using: &random) { scalars.append(alphabet.randomElement(using: &random)!) }
            let original = String(scalars)
            let escaped = InertText.escaped(original)
            if let earlier = seen[escaped] { #expect(earlier.unicodeScalars.elementsEqual(original.unicodeScalars), "seed \(seed): two texts escape alike") }
            seen[escaped] = original
        }
    }
}

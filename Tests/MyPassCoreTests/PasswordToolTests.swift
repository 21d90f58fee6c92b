import Foundation
import MyPassCore
import Testing

/// Wordlists and passphrases, the zxcvbn estimate's bands, and path-addressed edits.
@Suite("Passwords, passphrases and path edits")
struct PasswordToolTests {
    private static func words(_ count: Int) -> String { (0..<count).map { "w\($0)" }.joined(separator: "\n") }

    @Test("a wordlist takes plain lines and dice lines, skips blanks, keeps each word once, refuses short lists and other lines")
    func wordlists() throws {
        let dice = (0..<1100).map { "\(11111 + $0)\tw\($0)" }.joined(separator: "\r\n")
        #expect(try Wordlist(text: dice).words.count == 1100)
        #expect(try Wordlist(text: Self.words(1030) + "\n\n" + Self.words(1030)).words.count == 1030)
        #expect(throws: VaultEditError.self) { try Wordlist(text: Self.words(1023)) }
        #expect(throws: VaultEditError.self) { try Wordlist(text: Self.words(1100) + "\ntwo words here") }
        #expect(abs(try Wordlist(text: Self.words(2048)).bitsPerWord - 11) < 1e-9)
    }

    @Test("passphrase words are drawn from the whole list, each about equally often")
    func passphraseUniform() throws {
        let list = try Wordlist(text: Self.words(1024))
        var counts: [String: Int] = [:]
        for _ in 0..<200 {
            for word in try PassphraseGenerator.generate(words: 100, from: list).split(separator: " ") { counts[String(word), default: 0] += 1 }
        }
        // 20,000 draws over 1,024 words: about 19.5 each; a biased or truncated draw leaves words out or piles up.
        #expect(counts.count > 1000)
        #expect(counts.values.max() ?? 0 < 50)
        #expect(throws: VaultEditError.self) { try PassphraseGenerator.generate(words: 0, from: list) }
    }

    @Test("the estimate: dictionary words are poor, long random strings excellent; parts name what zxcvbn recognised")
    func strength() {
        let weak = PasswordStrength(of: "password123")
        #expect(weak.rating == .poor && weak.parts.map(\.kind) == [.dictionary, .sequence] && weak.parts.first?.text == "password")
        #expect(PasswordStrength(of: "vU3!qZ8#rT6@wP1$yS5%").rating == .excellent)
        #expect(PasswordStrength(of: "").entropyBits == 0)
        #expect(PasswordStrength(of: "pässwörd").length == 8)
        #expect(PasswordStrength(of: "alice2026x", userWords: ["alice2026x"]).entropyBits < PasswordStrength(of: "alice2026x").entropyBits)
    }

    @Test("path edits refuse a second sibling of one name and a missing parent; a rename may keep its own name")
    func pathEdits() throws {
        let vault = Vault.empty(name: "t")
        let (withWork, work) = try vault.addingGroup(at: VaultPath("/Work"))
        #expect(throws: VaultEditError.pathTaken(VaultPath("/Work"))) { try withWork.addingGroup(at: VaultPath("/Work")) }
        #expect(throws: VaultEditError.nothingAt(VaultPath("/Missing"))) { try withWork.addingGroup(at: VaultPath("/Missing/X")) }
        let (both, home) = try withWork.addingGroup(at: VaultPath("/Home"))
        #expect(throws: VaultEditError.pathTaken(VaultPath("/Work"))) { try both.checkGroupName("Work", for: home) }
        try both.checkGroupName("Work", for: work)
        #expect(throws: VaultEditError.self) { try both.checkGroupName("a/b", for: work) }
        let (withEntry, _) = try both.addingEntry(title: "Mail", to: work)
        #expect(throws: VaultEditError.pathTaken(VaultPath("/Work/Mail"))) { _ = try withEntry.checkNewEntry(titled: "Mail", in: VaultPath("/Work")) }
        #expect(try withEntry.checkNewEntry(titled: "Mail", in: VaultPath("/Home")).uuid == home)
    }
}

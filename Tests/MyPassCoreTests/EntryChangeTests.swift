import Foundation
import MyPassCore
import Testing

/// EntryChange and attachment edits as pure functions: protect-flag rules, one history item,
/// content-addressed attachments.
@Suite("EntryChange and attachments")
struct EntryChangeTests {
    private static let t0 = Timestamp(iso8601: "2026-01-01T00:00:00Z")!
    private static let t1 = Timestamp(iso8601: "2026-01-02T00:00:00Z")!

    private func vaultWithEntry() throws -> (Vault, UUID) {
        let vault = Vault.empty(name: "t", at: Self.t0)
        return try vault.addingEntry(title: "E", password: "p", to: vault.root.uuid, at: Self.t0)
    }

    @Test("new fields take Meta's protection for standard names, existing ones keep their flag, protect/unprotect decide")
    func protectFlags() throws {
        let (vault, uuid) = try vaultWithEntry()
        var change = EntryChange()
        change.setFields = [("Password", "new"), ("Custom", "c"), ("Secret", "s")]
        change.protect = ["Secret"]
        let edited = try vault.updatingEntry(uuid, at: Self.t1) { try change.apply(to: &$0, protection: vault.meta.memoryProtection) }
        let entry = try #require(edited.root.entries.first)
        #expect(entry.field("Password")?.isProtected == true && entry.field("Custom")?.isProtected == false)
        #expect(entry.field("Secret")?.isProtected == true)
        #expect(entry.history.count == 1 && entry.times.lastModified == Self.t1)
        var unprotect = EntryChange()
        unprotect.unprotect = ["Secret"]
        unprotect.removeFields = ["Custom"]
        let again = try edited.updatingEntry(uuid, at: Self.t1) { try unprotect.apply(to: &$0, protection: vault.meta.memoryProtection) }
        let after = try #require(again.root.entries.first)
        #expect(after.field("Secret")?.isProtected == false && after.field("Custom") == nil)
    }

    @Test("standard fields cannot be removed; a bad TOTP URI, icon or field name is refused")
    func refusals() throws {
        let (vault, uuid) = try vaultWithEntry()
        var entry = try #require(vault.root.entry(uuid)?.entry)
        for change in [EntryChange.removing("Title"), .totp("https://example.com"), .icon(69), .field("")] {
            #expect(throws: VaultEditError.self) { try change.apply(to: &entry, protection: vault.meta.memoryProtection) }
        }
        #expect(throws: VaultEditError.self) { try EntryChange.tags(from: "a;b") }
        #expect(try EntryChange.tags(from: " a , ,b ") == ["a", "b"])
    }

    @Test("the same bytes attached to two entries are stored once; a replaced attachment stays in history")
    func attachmentsDeduplicated() throws {
        let (vault, first) = try vaultWithEntry()
        let (withSecond, second) = try vault.addingEntry(title: "F", to: vault.root.uuid, at: Self.t0)
        let bytes = Data("same file".utf8)
        var edited = try withSecond.attaching(bytes, named: "a.txt", to: first, at: Self.t1)
        edited = try edited.attaching(bytes, named: "b.txt", to: second, at: Self.t1)
        #expect(edited.binaries.binaries.count == 1)
        #expect(throws: VaultEditError.self) { try edited.attaching(Data("other".utf8), named: "a.txt", to: first) }
        edited = try edited.attaching(Data("other".utf8), named: "a.txt", to: first, replacing: true, at: Self.t1)
        let entry = try #require(edited.root.entry(first)?.entry)
        #expect(edited.attachmentData(named: "a.txt", of: entry) == Data("other".utf8))
        #expect(entry.history.last.flatMap { edited.attachmentData(named: "a.txt", of: $0) } == bytes)
        #expect(edited.binaries.binaries.count == 2)
    }
}

private extension EntryChange {
    static func removing(_ name: String) -> EntryChange { var change = EntryChange(); change.removeFields = [name]; return change }
    static func totp(_ uri: String) -> EntryChange { var change = EntryChange(); change.totp = uri; return change }
    static func icon(_ number: Int) -> EntryChange { var change = EntryChange(); change.icon = number; return change }
    static func field(_ name: String) -> EntryChange { var change = EntryChange(); change.setFields = [(name, "v")]; return change }
}

@Suite("Password generator options (keepassxc-cli's)")
struct PasswordGeneratorOptionsTests {
    @Test("classes, exclusions, look-alikes, custom sets and every-group hold for every password drawn")
    func options() throws {
        var options = PasswordGenerator.Options()
        #expect(try PasswordGenerator.generate(options).count == 32)

        options.classes = [.lower, .upper, .numeric, .special]
        options.length = 4
        options.everyGroup = true
        options.excluded = "abc"
        options.excludeSimilar = true
        for _ in 0..<300 {
            let password = try PasswordGenerator.generate(options)
            #expect(password.count == 4)
            for group in [PasswordGenerator.CharacterClass.lower, .upper, .numeric, .special] {
                #expect(password.contains(where: group.characters.contains), "\(group) missing")
            }
            #expect(!password.contains(where: { "abc".contains($0) || PasswordGenerator.similarCharacters.contains($0) }))
        }
        var digitsOnly = PasswordGenerator.Options()
        digitsOnly.classes = [.numeric]
        digitsOnly.length = 200
        #expect(try PasswordGenerator.generate(digitsOnly).allSatisfy(\.isNumber))
        // Every digit appears in 200 draws: no class member is left out by the sampling.
        #expect(Set(try PasswordGenerator.generate(digitsOnly)).count == 10)
        var custom = PasswordGenerator.Options()
        custom.custom = "xy"
        #expect(try PasswordGenerator.generate(custom).allSatisfy { $0 == "x" || $0 == "y" })
        custom.excluded = "xy"
        #expect(throws: VaultEditError.self) { try PasswordGenerator.generate(custom) }
        var tooShort = PasswordGenerator.Options()
        tooShort.classes = [.lower, .upper, .numeric]
        tooShort.length = 2
        tooShort.everyGroup = true
        #expect(throws: VaultEditError.self) { try PasswordGenerator.generate(tooShort) }

    }
}

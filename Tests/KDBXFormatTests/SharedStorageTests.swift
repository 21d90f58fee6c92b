import Foundation
import KDBXFormat
@testable import MyPassCore
import Testing

/// An opened entry's history items hold the values they repeat once: the reader makes each version
/// use the storage of the version before it (`Entry.shareStorage(with:)`), without changing content.
@Suite("history items share the storage of the values they repeat")
struct SharedStorageTests {
    static let time = Timestamp(iso8601: "2026-05-01T10:00:00Z")!

    static func version(password: String, recovery: String, notes: String, minutes: Int64) -> Entry {
        var entry = Entry(uuid: UUID(uuidString: "6D3C2D57-2C59-4F41-9D76-4E5B8E0C7A11")!, tags: ["work", "mail"],
                          times: Times(allAt: Timestamp(secondsSinceYearOne: time.secondsSinceYearOne + minutes * 60)))
        entry.fields = [
            EntryField(key: "Title", value: .plain("A rather long title that does not fit inline")),
            EntryField(key: "Password", value: FieldValue(password, isProtected: true)),
            EntryField(key: "Notes", value: .plain(notes)),
            EntryField(key: "Recovery code for the account", value: FieldValue(recovery, isProtected: true)),
        ]
        return entry
    }

    @Test("a reopened vault shares equal protected values across versions and keeps different ones apart")
    func sharedAfterOpening() throws {
        var current = Self.version(password: "pw-3", recovery: "RC-same", notes: "changed notes", minutes: 3)
        current.history = [
            Self.version(password: "pw-1", recovery: "RC-same", notes: "old notes", minutes: 1),
            Self.version(password: "pw-2", recovery: "RC-same", notes: "old notes", minutes: 2),
        ]
        var vault = Vault.empty(name: "sharing", at: Self.time)
        vault.root.entries = [current]
        let key = try CompositeKey(password: "sharing")
        let settings = FormatSettings(version: .v4_0, cipher: .aes256, kdf: .aesKDF(seed: Data(repeating: 5, count: 32), rounds: 10))
        let opened = try KDBXReader.open(try KDBXWriter.serialize(vault, settings: settings, key: key).file, key: key).vault
        #expect(opened == vault, "sharing storage changes no content")

        let entry = try #require(opened.root.entries.first)
        func masked(_ version: Entry, _ key: String) throws -> [UInt8] {
            guard case .protected(let value) = try #require(version.field(key)) else { throw SharingFailure.notProtected(key) }
            return value.maskedBytes
        }
        // Each protected value is masked under its own nonce, so equal masked bytes mean one storage.
        let recovery = try [entry.history[0], entry.history[1], entry].map { try masked($0, "Recovery code for the account") }
        #expect(recovery[0] == recovery[1] && recovery[1] == recovery[2])
        let passwords = try [entry.history[0], entry.history[1], entry].map { try masked($0, "Password") }
        #expect(Set(passwords).count == 3, "different passwords keep their own storage")
        #expect(entry.history[1].field("Notes") == .plain("old notes") && entry.field("Notes") == .plain("changed notes"))
        // What a shared value reveals is its own text in every version.
        #expect([entry.history[0], entry.history[1], entry].map { $0.text("Recovery code for the account") } == ["RC-same", "RC-same", "RC-same"])
        #expect([entry.history[0], entry.history[1], entry].map { $0.text("Password") } == ["pw-1", "pw-2", "pw-3"])
    }

    @Test("a value taken from the version before keeps each version's own protection, name and tags")
    func takenFromEarlierVersion() throws {
        var current = Self.version(password: "same", recovery: "RC", notes: "text", minutes: 2)
        current.setField("Notes", FieldValue("text", isProtected: true))  // plain before, protected now
        current.setField("Password", .plain("same"))  // protected before, plain now
        current.tags = ["mail", "work"]  // the same tags in another order
        current.fields.swapAt(0, 3)  // the same names elsewhere
        current.history = [Self.version(password: "same", recovery: "RC", notes: "text", minutes: 1)]
        var vault = Vault.empty(name: "sharing", at: Self.time)
        vault.root.entries = [current]
        let key = try CompositeKey(password: "sharing")
        let settings = FormatSettings(version: .v4_0, cipher: .chaCha20, kdf: .aesKDF(seed: Data(repeating: 6, count: 32), rounds: 10))
        let opened = try KDBXReader.open(try KDBXWriter.serialize(vault, settings: settings, key: key).file, key: key).vault
        #expect(opened == vault)
        let entry = try #require(opened.root.entries.first)
        #expect(entry.field("Notes")?.isProtected == true && entry.history[0].field("Notes")?.isProtected == false)
        #expect(entry.field("Password") == .plain("same") && entry.history[0].field("Password")?.isProtected == true)
        #expect(entry.fields.map(\.key) == current.fields.map(\.key) && entry.tags == ["mail", "work"] && entry.history[0].tags == ["work", "mail"])
    }

    @Test("sharing with a version of other fields, order and protection changes nothing")
    func contentUnchanged() {
        var later = Self.version(password: "new", recovery: "RC", notes: "n", minutes: 2)
        later.fields.swapAt(0, 2)
        later.fields.append(EntryField(key: "Only here", value: .plain("x")))
        later.setField("Notes", FieldValue("n", isProtected: true))  // same text, now protected
        later.tags = ["work"]
        later.foregroundColor = "#FF0000"
        var earlier = Self.version(password: "old", recovery: "RC", notes: "n", minutes: 1)
        earlier.setField("Title", nil)
        let before = later
        later.shareStorage(with: earlier)
        #expect(later == before)
        #expect(later.field("Notes")?.isProtected == true && later.foregroundColor == "#FF0000" && later.tags == ["work"])
        #expect(later.text("Password") == "new")
    }

    @Test("a copy opened beside the vault it is merged into takes that vault's storage where a version is equal, and only there")
    func copySharesWithDonor() throws {
        func entry(_ uuid: String, password: String, minutes: Int64, history: [Entry] = []) -> Entry {
            var entry = Self.version(password: password, recovery: "RC-\(uuid.prefix(4))", notes: "notes", minutes: minutes)
            entry.uuid = UUID(uuidString: uuid)!
            entry.history = history.map { var item = $0; item.uuid = entry.uuid; return item }
            return entry
        }
        let first = "11111111-2C59-4F41-9D76-4E5B8E0C7A11", second = "22222222-2C59-4F41-9D76-4E5B8E0C7A11"
        let older = Self.version(password: "pw-0", recovery: "RC-2222", notes: "notes", minutes: 1)
        var local = Vault.empty(name: "sharing", at: Self.time)
        local.root.entries = [entry(first, password: "one", minutes: 2), entry(second, password: "two", minutes: 2, history: [older])]
        // The copy changed the second entry's password (its old version went to the history).
        var copy = local
        let before = copy.root.entries[1]
        copy.root.entries[1] = entry(second, password: "three", minutes: 5, history: before.history + [before.withoutHistory])
        let key = try CompositeKey(password: "sharing")
        let settings = FormatSettings(version: .v4_0, cipher: .aes256, kdf: .aesKDF(seed: Data(repeating: 7, count: 32), rounds: 10))
        let donor = try KDBXReader.open(try KDBXWriter.serialize(local, settings: settings, key: key).file, key: key).vault
        let copyFile = try KDBXWriter.serialize(copy, settings: settings, key: key).file
        let plain = try KDBXReader.open(copyFile, key: key).vault
        let shared = try KDBXReader.open(copyFile, key: key, sharingStorageWith: donor).vault
        #expect(shared == plain && shared == copy, "a donor changes no content")

        func masked(_ version: Entry) throws -> [UInt8] {
            guard case .protected(let value) = try #require(version.field("Password")) else { throw SharingFailure.notProtected("Password") }
            return value.maskedBytes
        }
        // Equal masked bytes mean one storage (each value is masked under its own nonce).
        #expect(try masked(shared.root.entries[0]) == masked(donor.root.entries[0]), "the unchanged entry is the donor's")
        #expect(try masked(plain.root.entries[0]) != masked(donor.root.entries[0]), "without a donor it has its own")
        let changed = shared.root.entries[1], donated = donor.root.entries[1]
        #expect(try masked(changed.history[0]) == masked(donated.history[0]) && masked(changed.history[1]) == masked(donated))
        #expect(changed.text("Password") == "three" && changed.history.map { $0.text("Password") } == ["pw-0", "two"])

        // A donor version at the same time with other values is not taken.
        var impostor = donor
        impostor.root.entries[0].setField("Password", FieldValue("not the file's", isProtected: true))
        let guarded = try KDBXReader.open(copyFile, key: key, sharingStorageWith: impostor).vault
        #expect(guarded == copy && guarded.root.entries[0].text("Password") == "one")
    }

    enum SharingFailure: Error { case notProtected(String) }
}

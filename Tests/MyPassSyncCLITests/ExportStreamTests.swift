import Foundation
import KDBXFormat
import MyPassCore
import Testing
@testable import MyPassSync
@testable import SyncCommit
@testable import SyncFiles
@testable import SyncRemote
@testable import SyncState
@testable import SyncWatch

@Suite("export --format json streamed")
struct ExportStreamTests {
    @Test("the streamed export is byte for byte the document encoded whole", arguments: [0, 1, 255, 256, 257, 600])
    func sameAsWholeDocument(entriesInBigGroup: Int) throws {
        let key = try CompositeKey(password: "export")
        let settings = FormatSettings(version: .v4_1, cipher: .aes256, kdf: .aesKDF(seed: Data(repeating: 3, count: 32), rounds: 10))
        let file = try KDBXWriter.serialize(Self.sampleVault(entriesInBigGroup: entriesInBigGroup), settings: settings, key: key).file
        let opened = try KDBXReader.open(file, key: key)
        var streamed = ""
        try ExportStream(emit: { streamed += $0 }).write(opened)
        let whole = try JSONText.encode(ExportDocument(opened)) + "\n"
        #expect(streamed == whole)
        let parsed = try JSONSerialization.jsonObject(with: Data(streamed.utf8)) as? [String: Any]
        #expect(parsed?["schema"] as? Int == 1)
    }

    /// Nested, empty and large groups; entries with history, custom and protected fields, tags,
    /// attachments, and text that JSON must escape; tombstones.
    static func sampleVault(entriesInBigGroup: Int) -> Vault {
        let time = Timestamp(iso8601: "2026-03-01T08:00:00Z")!
        var vault = Vault.empty(name: "Export \"sample\" / ümlaut", at: time)
        let attachment = vault.binaries.add(Data("attached\n".utf8), isProtected: false)
        func entry(_ index: Int, history: Bool) -> Entry {
            var entry = Entry(uuid: UUID(), tags: index % 2 == 0 ? ["a", "b"] : [], times: Times(allAt: time))
            entry.fields = [
                EntryField(key: "Title", value: .plain("Entry \(index) \"quoted\" \\ back/slash")),
                EntryField(key: "UserName", value: .plain("user\(index)")),
                EntryField(key: "Password", value: FieldValue("pw\n\(index)\t😀", isProtected: true)),
                EntryField(key: "Notes", value: .plain(index % 3 == 0 ? "" : "line 1\nline 2\r\n")),
                EntryField(key: "Custom \(index % 4)", value: FieldValue("value \(index)", isProtected: index % 2 == 1)),
            ]
            if index % 3 == 0 {
                // Names whose order differs between byte order, case-insensitive and canonical
                // order, a repeated name (the first one counts), and control characters to escape.
                for (key, value) in [("b", "\u{1}\u{8}\u{c}\u{1f}\u{7f}"), ("B", "x"), ("a10", "1"), ("a9", "9"),
                                     ("\u{e9}", "nfc"), ("e\u{302}", "nfd"), ("b", "second b"), ("\u{2028}/", "")] {
                    entry.fields.append(EntryField(key: key, value: .plain(value)))
                }
            }
            if index % 5 == 0 { entry.attachments = [Attachment(name: "a\(index).txt", binary: attachment)] }
            if index % 7 == 0 { entry.times.expires = true }
            if history {
                var old = entry
                old.setField("UserName", .plain("old\(index)"))
                old.times.lastModified = Timestamp(secondsSinceYearOne: time.secondsSinceYearOne - 60)
                entry.history = [old]
            }
            return entry
        }
        var big = Group(uuid: UUID(), name: "Big", times: Times(allAt: time))
        big.entries = (0..<entriesInBigGroup).map { entry($0, history: $0 % 2 == 0) }
        var inner = Group(uuid: UUID(), name: "Inner \"deep\"", notes: "notes\nhere", times: Times(allAt: time))
        inner.entries = [entry(1000, history: true)]
        inner.groups = [Group(uuid: UUID(), name: "Empty", times: Times(allAt: time))]
        var outer = Group(uuid: UUID(), name: "Outer", times: Times(allAt: time))
        outer.groups = [inner, Group(uuid: UUID(), name: "Also empty", times: Times(allAt: time))]
        vault.root.groups = [big, outer]
        vault.root.entries = [entry(2000, history: false)]
        vault.deletedObjects = [DeletedObject(uuid: UUID(), deletedAt: time)]
        return vault
    }
}

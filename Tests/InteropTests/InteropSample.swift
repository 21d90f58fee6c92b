import Foundation
import MyPassCore

/// A vault with the content both reference tools can show: groups, a recycle bin with an entry,
/// custom and protected fields, tags, history, attachments, non-ASCII text, a tombstone.
enum InteropSample {
    static func make() -> Vault {
        let t0 = Timestamp(iso8601: "2026-03-04T05:06:07Z")!
        let t1 = Timestamp(iso8601: "2026-03-05T05:06:07Z")!
        var vault = Vault.empty(name: "Interop ✓", at: t0)
        let file = vault.binaries.add(Data("interop attachment\n".utf8), isProtected: false)
        func entry(_ id: Int, _ title: String, _ user: String, _ password: String) -> Entry {
            var entry = Entry(uuid: UUID(uuidString: String(format: "DDDDDDDD-0000-0000-0000-%012d", id))!, times: Times(allAt: t0))
            entry.fields = [
                EntryField(key: "Title", value: .plain(title)),
                EntryField(key: "UserName", value: .plain(user)),
                EntryField(key: "Password", value: FieldValue(password, isProtected: true)),
                EntryField(key: "URL", value: .plain("https://example.org/\(id)")),
                EntryField(key: "Notes", value: .plain("notes of \(title)\nsecond line & <markup>")),
            ]
            return entry
        }
        var bank = entry(1, "Bänk", "bob", "bänk-pw")
        let older = bank
        bank.times.lastModified = t1
        bank.setField("Password", FieldValue("bänk-pw-2", isProtected: true))
        bank.setField("Account", .plain("12345"))
        bank.setField("PIN", FieldValue("9876", isProtected: true))
        bank.tags = ["finance", "important"]
        bank.attachments = [Attachment(name: "statement.txt", binary: file)]
        bank.history = [older]
        var finance = Group(uuid: UUID(uuidString: "EEEEEEEE-0000-0000-0000-000000000001")!, name: "Finance", times: Times(allAt: t0))
        finance.entries = [bank, entry(2, "Empty password", "carol", "")]
        var sub = Group(uuid: UUID(uuidString: "EEEEEEEE-0000-0000-0000-000000000002")!, name: "Cards", times: Times(allAt: t0))
        sub.entries = [entry(3, "Visa", "dave", "v1sa")]
        finance.groups = [sub]
        var recycleBin = Group(uuid: UUID(uuidString: "EEEEEEEE-0000-0000-0000-000000000003")!, name: "Recycle Bin", iconID: 43,
                               times: Times(allAt: t0), enableAutoType: false, enableSearching: false)
        recycleBin.entries = [entry(4, "Old mail", "erin", "old")]
        vault.root.groups = [finance, recycleBin]
        vault.root.entries = [entry(5, "Top level", "frank", "t0p")]
        vault.meta.recycleBinUUID = recycleBin.uuid
        vault.deletedObjects = [DeletedObject(uuid: UUID(uuidString: "FFFFFFFF-0000-0000-0000-000000000001")!, deletedAt: t1)]
        return vault
    }
}

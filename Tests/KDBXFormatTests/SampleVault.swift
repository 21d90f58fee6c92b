import Foundation
import MyPassCore

/// A vault that uses every part of the model: nested groups, custom and protected fields, tags,
/// attachments (one protected), history, auto-type, custom data, custom icons, tombstones, and
/// elements another client wrote that this model does not interpret.
enum SampleVault {
    static func make(kdbx41Features: Bool = false) -> Vault {
        let t0 = Timestamp(iso8601: "2026-01-02T03:04:05Z")!
        let t1 = Timestamp(iso8601: "2026-02-03T04:05:06Z")!
        var vault = Vault.empty(name: "Sample ✓", at: t0)
        vault.meta.settingsChanged = nil
        vault.meta.databaseDescription = "for <tests> & \"quotes\"\r\nwith CRLF"
        vault.meta.historyMaxItems = 7
        vault.meta.customData = [CustomDataItem(key: "KPXC_DECRYPTION_TIME_PREFERENCE", value: "100")]
        let iconID = UUID(uuidString: "11111111-2222-3333-4444-555555555555")!
        vault.meta.customIcons = [CustomIcon(uuid: iconID, data: Data([0x89, 0x50, 0x4E, 0x47]))]
        vault.meta.preserved = [PreservedXML(name: "FuturePlugin", attributes: [.init(name: "v", value: "2")],
                                             children: [PreservedXML(name: "Setting", text: "on")])]
        let attachment = vault.binaries.add(Data("attachment body".utf8), isProtected: false)
        let secretFile = vault.binaries.add(Data((0..<300).map { UInt8($0 % 256) }), isProtected: true)

        var old = Entry(uuid: UUID(uuidString: "AAAAAAAA-0000-0000-0000-000000000001")!, times: Times(allAt: t0))
        old.fields = [
            EntryField(key: "Title", value: .plain("Mail")),
            EntryField(key: "UserName", value: .plain("me@example.org")),
            EntryField(key: "Password", value: FieldValue("old-secret", isProtected: true)),
            EntryField(key: "URL", value: .plain("https://mail.example.org")),
            EntryField(key: "Notes", value: .plain("")),
        ]
        var current = old
        current.times.lastModified = t1
        current.setField("Password", FieldValue("new-sécret\u{1F511}", isProtected: true))
        current.setField("PIN", FieldValue("0000", isProtected: true))
        current.setField("Security question", .plain("first pet?"))
        current.tags = ["mail", "personal"]
        current.attachments = [Attachment(name: "notes.txt", binary: attachment),
                               Attachment(name: "key.bin", binary: secretFile)]
        current.autoType = AutoType(isEnabled: true, dataTransferObfuscation: 1, defaultSequence: "{USERNAME}{TAB}{PASSWORD}{ENTER}",
                                    associations: [.init(window: "Mail - *", keystrokeSequence: "{PASSWORD}")])
        current.customData = [CustomDataItem(key: "browser", value: "{\"hide\":true}")]
        current.customIconUUID = iconID
        current.foregroundColor = "#FF0000"
        current.preserved = [PreservedXML(name: "OtherClientField", text: "kept as is")]
        current.history = [old]

        var work = Group(uuid: UUID(uuidString: "BBBBBBBB-0000-0000-0000-000000000002")!, name: "Work", times: Times(allAt: t0))
        work.notes = "group notes"
        work.enableAutoType = false
        work.entries = [current]
        var nested = Group(uuid: UUID(uuidString: "BBBBBBBB-0000-0000-0000-000000000003")!, name: "Nested", times: Times(allAt: t1))
        var plain = Entry(uuid: UUID(uuidString: "AAAAAAAA-0000-0000-0000-000000000004")!, times: Times(allAt: t1))
        plain.fields = [EntryField(key: "Title", value: .plain("Plain")), EntryField(key: "Password", value: FieldValue("", isProtected: true))]
        plain.times.expires = true
        plain.times.usageCount = 3
        nested.entries = [plain]
        work.groups = [nested]
        vault.root.groups = [work]
        vault.deletedObjects = [DeletedObject(uuid: UUID(uuidString: "CCCCCCCC-0000-0000-0000-000000000005")!, deletedAt: t1)]
        vault.preservedRootElements = []

        if kdbx41Features {
            vault.root.groups[0].tags = ["group-tag"]
            vault.root.groups[0].groups[0].previousParentGroup = vault.root.uuid
            vault.root.groups[0].entries[0].qualityCheck = false
            vault.meta.customData[0].lastModified = t1
        }
        return vault
    }
}

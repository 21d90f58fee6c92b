internal import Foundation
internal import SyncFiles
internal import SyncState
internal import SyncCommit
internal import SyncWatch
internal import SyncRemote
internal import KDBXFormat
internal import MyPassCore

/// The JSON of `export --format json`, with the keys CLI.md fixes. Secrets are included: this is
/// the one output meant to carry them.
struct ExportDocument: Encodable {
    let schema = 1
    let format: FormatFacts
    let meta: MetaFacts
    let root: GroupExport
    let deletedObjects: [DeletedExport]

    struct FormatFacts: Encodable {
        let version: String
        let cipher: String
        let kdf: String
        let compression: String
    }

    struct MetaFacts: Encodable {
        let name: String
        let recycleBin: String?
        let historyMaxItems: Int
        let historyMaxSize: Int64

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(name, forKey: .name)
            try container.encode(recycleBin, forKey: .recycleBin)  // null, not absent
            try container.encode(historyMaxItems, forKey: .historyMaxItems)
            try container.encode(historyMaxSize, forKey: .historyMaxSize)
        }

        private enum CodingKeys: String, CodingKey {
            case name, recycleBin, historyMaxItems, historyMaxSize
        }
    }

    struct TimesExport: Encodable {
        let created: String
        let modified: String
        let locationChanged: String
        let expires: String?

        init(_ times: Times) {
            created = times.created.iso8601
            modified = times.lastModified.iso8601
            locationChanged = times.locationChanged.iso8601
            expires = times.expires ? times.expiryTime.iso8601 : nil
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(created, forKey: .created)
            try container.encode(modified, forKey: .modified)
            try container.encode(locationChanged, forKey: .locationChanged)
            try container.encode(expires, forKey: .expires)
        }

        private enum CodingKeys: String, CodingKey {
            case created, modified, locationChanged, expires
        }
    }

    struct AttachmentExport: Encodable {
        let name: String
        let size: Int
        let sha256: String
    }

    struct EntryExport: Encodable {
        let uuid: String
        let title: String
        let username: String
        let password: String
        let url: String
        let notes: String
        let tags: [String]
        let fields: [String: String]
        let protected: [String]
        let attachments: [AttachmentExport]
        let times: TimesExport
        let history: [EntryExport]?

        init(_ entry: Entry, pool: BinaryPool, includeHistory: Bool) {
            uuid = entry.uuid.canonicalString
            title = entry.title
            username = entry.userName
            password = entry.text(EntryField.password)
            url = entry.url
            notes = entry.notes
            tags = entry.tags
            fields = Dictionary(entry.customFields.map { ($0.key, $0.value.text) }, uniquingKeysWith: { first, _ in first })
            protected = entry.fields.filter { $0.value.isProtected }.map(\.key)
            attachments = entry.attachments.map { attachment in
                AttachmentExport(name: attachment.name, size: pool[attachment.binary]?.data.count ?? 0,
                                 sha256: attachment.binary.sha256)
            }
            times = TimesExport(entry.times)
            history = includeHistory ? entry.history.map { EntryExport($0, pool: pool, includeHistory: false) } : nil
        }
    }

    struct GroupExport: Encodable {
        let uuid: String
        let name: String
        let notes: String
        let times: TimesExport
        let groups: [GroupExport]
        let entries: [EntryExport]

        init(_ group: Group, pool: BinaryPool) {
            uuid = group.uuid.canonicalString
            name = group.name
            notes = group.notes
            times = TimesExport(group.times)
            groups = group.groups.map { GroupExport($0, pool: pool) }
            entries = group.entries.map { EntryExport($0, pool: pool, includeHistory: true) }
        }
    }

    struct DeletedExport: Encodable {
        let uuid: String
        let deletedAt: String
    }

    /// Everything but the groups and entries below the root (`ExportStream` writes those itself).
    init(shallow opened: OpenedVault) {
        var bare = opened.vault
        bare.root.groups = []
        bare.root.entries = []
        self.init(OpenedVault(vault: bare, settings: opened.settings, derivedKey: opened.derivedKey))
    }

    init(_ opened: OpenedVault) {
        let vault = opened.vault
        format = FormatFacts(
            version: KDBXWriter.requiredVersion(for: vault, requested: opened.settings.version).description,
            cipher: opened.settings.cipher.rawValue, kdf: opened.settings.kdf.name,
            compression: opened.settings.compression.name)
        meta = MetaFacts(
            name: vault.meta.databaseName,
            recycleBin: vault.meta.recycleBinEnabled ? vault.meta.recycleBinUUID?.canonicalString : nil,
            historyMaxItems: vault.meta.historyMaxItems, historyMaxSize: vault.meta.historyMaxSize)
        root = GroupExport(vault.root, pool: vault.binaries)
        deletedObjects = vault.deletedObjects.map { DeletedExport(uuid: $0.uuid.canonicalString, deletedAt: $0.deletedAt.iso8601) }
    }
}

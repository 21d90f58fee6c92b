public import Foundation

/// A vault made by `keepassxc-cli import` from KeePass XML written here: entries with custom
/// fields (protected or not) and history items, which keepassxc-cli's own `add` and `edit` cannot
/// make. The file is KeePassXC's through and through (its writer, its KDF tuned by `-t`).
public enum KeePassXMLVault {
    /// One string field of an entry.
    public struct Field: Sendable, Equatable {
        public let key: String
        public let value: String
        public let protected: Bool

        public init(_ key: String, _ value: String, protected: Bool = false) {
            self.key = key
            self.value = value
            self.protected = protected
        }
    }

    /// One entry: its fields now, when it was last modified, and its older versions (oldest first).
    public struct Entry: Sendable {
        public let uuid: UUID
        public let fields: [Field]
        public let modified: String
        public let history: [(fields: [Field], modified: String)]

        public init(uuid: UUID = UUID(), fields: [Field], modified: String = "2026-01-02T00:00:00Z",
                    history: [(fields: [Field], modified: String)] = []) {
            self.uuid = uuid
            self.fields = fields
            self.modified = modified
            self.history = history
        }
    }

    /// One group: its entries and subgroups.
    public struct Group: Sendable {
        public let uuid: UUID
        public let name: String
        public let entries: [Entry]
        public let groups: [Group]

        public init(uuid: UUID = UUID(), name: String, entries: [Entry] = [], groups: [Group] = []) {
            self.uuid = uuid
            self.name = name
            self.entries = entries
            self.groups = groups
        }
    }

    /// Makes the vault at `path` (which must not exist) holding `root` below a root group named
    /// `rootName`, protected by `password`, with `keepassxc-cli import -t 100`.
    public static func make(_ path: URL, password: String, rootName: String = "Root", groups: [Group], rootEntries: [Entry] = []) throws {
        let root = Group(name: rootName, entries: rootEntries, groups: groups)
        let xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><KeePassFile><Meta><Generator>mypass-sync tests</Generator>"
            + "<DatabaseName>\(escaped(rootName))</DatabaseName><RecycleBinEnabled>True</RecycleBinEnabled></Meta>"
            + "<Root>\(groupXML(root))<DeletedObjects/></Root></KeePassFile>"
        let source = path.deletingLastPathComponent().appendingPathComponent(".import-\(UUID().uuidString).xml")
        defer { try? FileManager.default.removeItem(at: source) }
        try Data(xml.utf8).write(to: source)
        try KeePassXCCLI.run(["import", "-q", "-p", "-t", "100", source.path, path.path], password: password, input: password + "\n")
    }

    private static func base64(_ uuid: UUID) -> String { withUnsafeBytes(of: uuid.uuid) { Data($0).base64EncodedString() } }

    private static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
            .replacingOccurrences(of: "\"", with: "&quot;")
    }

    private static func times(_ modified: String) -> String {
        let created = "2026-01-01T00:00:00Z"
        return "<Times><LastModificationTime>\(modified)</LastModificationTime><CreationTime>\(created)</CreationTime>"
            + "<LastAccessTime>\(modified)</LastAccessTime><ExpiryTime>\(created)</ExpiryTime><Expires>False</Expires>"
            + "<UsageCount>0</UsageCount><LocationChanged>\(created)</LocationChanged></Times>"
    }

    private static func entryBody(_ uuid: UUID, _ fields: [Field], _ modified: String) -> String {
        "<UUID>\(base64(uuid))</UUID>\(times(modified))" + fields.map { field in
            "<String><Key>\(escaped(field.key))</Key><Value\(field.protected ? " ProtectInMemory=\"True\"" : "")>\(escaped(field.value))</Value></String>"
        }.joined()
    }

    private static func groupXML(_ group: Group) -> String {
        "<Group><UUID>\(base64(group.uuid))</UUID><Name>\(escaped(group.name))</Name>\(times("2026-01-01T00:00:00Z"))"
            + group.entries.map { entry in
                "<Entry>\(entryBody(entry.uuid, entry.fields, entry.modified))"
                    + (entry.history.isEmpty ? "" : "<History>" + entry.history.map { "<Entry>\(entryBody(entry.uuid, $0.fields, $0.modified))</Entry>" }.joined() + "</History>")
                    + "</Entry>"
            }.joined()
            + group.groups.map(groupXML).joined() + "</Group>"
    }
}

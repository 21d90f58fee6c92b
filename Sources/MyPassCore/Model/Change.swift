public import Foundation

/// One line of a merge or diff report: what happened to which object, never a secret value.
public struct Change: Sendable, Hashable, Codable, CustomStringConvertible {
    /// What kind of change.
    public enum Kind: String, Sendable, Codable, CaseIterable {
        /// An object the local vault did not have.
        case added
        /// Fields taken from the remote side (named in `fields`).
        case updated
        /// The object now sits in another group.
        case moved
        /// The object was removed (a tombstone newer than its last edit).
        case deleted
        /// A deletion was overridden by a newer edit; the object stays.
        case restored
        /// Both sides changed the same fields differently; the newer side won, the other is in history.
        case conflict
        /// History items were added from the other side.
        case historyMerged
        /// History items were dropped to respect HistoryMaxItems / HistoryMaxSize (or removed on a side).
        case historyTrimmed
        /// A vault setting changed (named in `fields`).
        case metaChanged
        /// Two recycle bins were folded into one.
        case recycleBinMerged
    }

    /// The kind of object.
    public enum Subject: String, Sendable, Codable {
        case entry, group, meta
    }

    /// What happened.
    public var kind: Kind
    /// To what kind of object.
    public var subject: Subject
    /// The object (nil for a vault setting).
    public var uuid: UUID?
    /// Group path of the object (`/Internet/Mail`), or the entry's path with its title.
    public var path: String
    /// The entry's title or the group's name.
    public var title: String
    /// Names of the fields concerned (never their values).
    public var fields: [String]
    /// A short free-form detail (e.g. which side won a conflict), never a secret.
    public var detail: String

    /// A change with these values.
    public init(_ kind: Kind, _ subject: Subject, uuid: UUID?, path: String, title: String, fields: [String] = [], detail: String = "") {
        self.kind = kind
        self.subject = subject
        self.uuid = uuid
        self.path = path
        self.title = title
        self.fields = fields
        self.detail = detail
    }

    private enum CodingKeys: String, CodingKey {
        case kind, subject, uuid, path, title, fields, detail
    }

    /// JSON with lowercase canonical UUIDs, like every JSON output of the tool.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(kind, forKey: .kind)
        try container.encode(subject, forKey: .subject)
        try container.encode(uuid?.canonicalString, forKey: .uuid)
        try container.encode(path, forKey: .path)
        try container.encode(title, forKey: .title)
        try container.encode(fields, forKey: .fields)
        try container.encode(detail, forKey: .detail)
    }

    /// The change in one line (names, never values).
    public var description: String {
        var text = "\(kind.rawValue) \(subject.rawValue) \(path)"
        if !fields.isEmpty { text += " [\(fields.joined(separator: ", "))]" }
        if !detail.isEmpty { text += " (\(detail))" }
        return text
    }
}

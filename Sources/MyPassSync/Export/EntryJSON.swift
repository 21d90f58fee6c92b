internal import Foundation
internal import SyncFiles
internal import SyncState
internal import SyncCommit
internal import SyncWatch
internal import SyncRemote
internal import MyPassCore

extension PrettyJSONBuffer {
    /// `entry` as `ExportDocument.EntryExport` encodes it (the same members, order and layout),
    /// written directly: the object's brace at the current position, its members at `depth + 1`.
    mutating func entry(_ entry: Entry, pool: BinaryPool, depth: Int, includeHistory: Bool) {
        var object = openObject(depth: depth)
        member("attachments", of: &object)
        var attachments = openArray(depth: depth + 1)
        for attachment in entry.attachments {
            element(of: &attachments)
            var item = openObject(depth: depth + 2)
            member("name", of: &item)
            string(attachment.name)
            member("sha256", of: &item)
            string(attachment.binary.sha256)
            member("size", of: &item)
            number(pool[attachment.binary]?.data.count ?? 0)
            closeObject(item)
        }
        closeArray(attachments)
        member("fields", of: &object)
        customFields(of: entry, depth: depth + 1)
        if includeHistory {
            member("history", of: &object)
            var history = openArray(depth: depth + 1)
            for item in entry.history {
                element(of: &history)
                self.entry(item, pool: pool, depth: depth + 2, includeHistory: false)
            }
            closeArray(history)
        }
        member("notes", of: &object)
        string(entry.notes)
        member("password", of: &object)
        string(entry.text(EntryField.password))
        member("protected", of: &object)
        var protected = openArray(depth: depth + 1)
        for field in entry.fields where field.value.isProtected {
            element(of: &protected)
            string(field.key)
        }
        closeArray(protected)
        member("tags", of: &object)
        var tags = openArray(depth: depth + 1)
        for tag in entry.tags {
            element(of: &tags)
            string(tag)
        }
        closeArray(tags)
        member("times", of: &object)
        times(entry.times, depth: depth + 1)
        member("title", of: &object)
        string(entry.title)
        member("url", of: &object)
        string(entry.url)
        member("username", of: &object)
        string(entry.userName)
        member("uuid", of: &object)
        string(entry.uuid.canonicalString)
        closeObject(object)
    }

    /// `ExportDocument.TimesExport`: created, expires (null unless the entry expires),
    /// locationChanged, modified.
    mutating func times(_ times: Times, depth: Int) {
        var object = openObject(depth: depth)
        member("created", of: &object)
        string(times.created.iso8601)
        member("expires", of: &object)
        if times.expires { string(times.expiryTime.iso8601) } else { null() }
        member("locationChanged", of: &object)
        string(times.locationChanged.iso8601)
        member("modified", of: &object)
        string(times.lastModified.iso8601)
        closeObject(object)
    }

    /// The custom fields as one object: the first of equal names kept (as a `Dictionary` built
    /// from them keeps it), names in the order of their UTF-8 bytes (as `JSONEncoder` sorts keys).
    private mutating func customFields(of entry: Entry, depth: Int) {
        var unique: [String: String] = [:]
        for field in entry.fields where !EntryField.isStandard(field.key) && unique[field.key] == nil {
            unique[field.key] = field.value.text
        }
        var object = openObject(depth: depth)
        for (key, value) in unique.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
            member(key, of: &object)
            string(value)
        }
        closeObject(object)
    }
}

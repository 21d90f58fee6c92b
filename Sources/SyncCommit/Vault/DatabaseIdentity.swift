public import Foundation
public import MyPassCore

/// What every version of one database shares, under any file name (the vault, its conflict copies,
/// git's and Unison's temporary files, rclone's renamed versions): the root group's UUID and its
/// creation time, both set when the database is made and kept by every KeePass program. Two
/// databases copied from one template share them too; a lookup that finds two stored items for one
/// identity therefore refuses to choose (`DesktopKeyring`). It lives in the encrypted part: it is
/// known only once a version is open.
public struct DatabaseIdentity: Sendable, Hashable, CustomStringConvertible {
    /// The root group's UUID.
    public let rootGroup: UUID
    /// The root group's creation time.
    public let created: Timestamp

    /// The identity of the database `vault` is a version of.
    public init(_ vault: Vault) {
        rootGroup = vault.root.uuid
        created = vault.root.times.created
    }

    /// The identity stored as `rootGroup` (a UUID) and `created` (ISO 8601) text.
    public init?(rootGroup: String, created: String) {
        guard let uuid = UUID(uuidString: rootGroup), let time = Timestamp(iso8601: created) else { return nil }
        self.rootGroup = uuid
        self.created = time
    }

    /// `root group 01234567-…, created 2026-01-02T03:04:05Z`.
    public var description: String { "root group \(rootGroup.uuidString), created \(created.iso8601)" }
}

public import Foundation
internal import SyncFiles
internal import SyncState
internal import SyncCommit
internal import SyncWatch
internal import SyncRemote
public import MyPassCore

/// Checks of the passwords a vault holds.
public enum PasswordAudit {
    /// An entry whose password is on a leaked-password list.
    public struct LeakedEntry: Sendable, Equatable {
        /// Where the entry is.
        public let path: VaultPath
        /// The entry.
        public let uuid: UUID
        /// How often the list says the password was seen in breaches.
        public let timesLeaked: Int
    }

    /// The entries outside the recycle bin whose current password is in `list`, in tree order. Empty
    /// passwords and entries excluded from reports (KeePassXC's `QualityCheck` off) are not looked up;
    /// each distinct password is looked up once.
    public static func leakedEntries(of vault: Vault, in list: LeakedPasswordList) throws -> [LeakedEntry] {
        var counts: [String: Int] = [:]
        var found: [LeakedEntry] = []
        for (entry, path) in vault.activeEntries() where entry.qualityCheck != false {
            let password = entry.text(EntryField.password)
            guard !password.isEmpty else { continue }
            let count = try counts[password] ?? list.timesLeaked(password)
            counts[password] = count
            if count > 0 { found.append(LeakedEntry(path: path, uuid: entry.uuid, timesLeaked: count)) }
        }
        return found
    }
}

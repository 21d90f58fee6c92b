internal import Foundation
internal import MyPassCore

/// Entry and group paths as the CLI spells them: `/Group/Sub/Title`, the leading slash optional.
enum EntryPaths {
    static func components(_ path: String) -> [String] {
        path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
    }

    /// The group at `path` ("/" or "" is the root).
    static func group(_ path: String, in vault: Vault) -> Group? {
        var current = vault.root
        for name in components(path) {
            guard let child = current.groups.first(where: { $0.name == name }) else { return nil }
            current = child
        }
        return current
    }

    /// The entry at `path` (its group path, then its title).
    static func entry(_ path: String, in vault: Vault) -> Entry? {
        var parts = components(path)
        guard let title = parts.popLast(), let group = group(parts.joined(separator: "/"), in: vault) else { return nil }
        return group.entries.first { $0.title == title }
    }

    /// The path of the group holding entry `uuid` and the entry's own path.
    static func path(of uuid: UUID, in vault: Vault) -> String? {
        var found: String?
        vault.root.forEachGroup { group, names in
            if let entry = group.entries.first(where: { $0.uuid == uuid }) {
                found = "/" + (names + [entry.title]).joined(separator: "/")
            }
        }
        return found
    }
}

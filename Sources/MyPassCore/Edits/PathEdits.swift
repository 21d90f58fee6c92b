public import Foundation

/// Edits addressed by path, as a command line or a script names things. KeePass itself allows two
/// siblings with one name; a path could not tell them apart, so these edits refuse to make such a
/// pair (keepassxc-cli's rule for `mkdir` and `add`).
extension Vault {
    /// A vault with a new group at `path` (its parent must exist; nothing may be there yet).
    public func addingGroup(at path: VaultPath, at time: Timestamp = .now()) throws(VaultEditError) -> (vault: Vault, uuid: UUID) {
        guard let (parentPath, name) = path.parentAndName else { throw .invalidName("the group path needs a name") }
        guard let parent = group(at: parentPath) else { throw .nothingAt(parentPath) }
        guard !parent.groups.contains(where: { $0.name == name }) else { throw .pathTaken(path) }
        return try addingGroup(named: name, to: parent.uuid, at: time)
    }

    /// Checks that group `uuid` may be called `name` where it is: not empty, no slash (a path could not
    /// name it), no sibling group of that name.
    public func checkGroupName(_ name: String, for uuid: UUID) throws(VaultEditError) {
        guard !name.isEmpty, !name.contains("/") else { throw .invalidName("a group name must be non-empty and without a slash") }
        guard let path = path(ofGroup: uuid), let parentPath = path.parentAndName?.parent, let parent = group(at: parentPath) else { return }
        if parent.groups.contains(where: { $0.name == name && $0.uuid != uuid }) {
            throw .pathTaken(VaultPath(components: parentPath.components + [name]))
        }
    }

    /// Checks that a new entry may be called `title` in group `parentPath` (it exists and holds no
    /// entry of that title).
    public func checkNewEntry(titled title: String, in parentPath: VaultPath) throws(VaultEditError) -> Group {
        guard !title.isEmpty else { throw .invalidName("the entry path needs a title") }
        guard let parent = group(at: parentPath) else { throw .nothingAt(parentPath) }
        guard !parent.entries.contains(where: { $0.title == title }) else {
            throw .pathTaken(VaultPath(components: parentPath.components + [title]))
        }
        return parent
    }
}

internal import Foundation

extension Vault {
    /// The entries whose title, user name, URL, notes or a tag contain `term` (case-insensitive), with
    /// their paths, in tree order. As in KeePass, groups that disable searching (`EnableSearching`
    /// false, inherited by their subgroups while those say nothing) and the recycle bin with
    /// everything in it are left out.
    public func searchEntries(_ term: String) -> [(entry: Entry, path: VaultPath)] {
        let needle = term.lowercased()
        let recycleBin = meta.recycleBinEnabled ? meta.recycleBinUUID : nil
        var found: [(Entry, VaultPath)] = []
        func visit(_ group: Group, names: [String], searchable inherited: Bool) {
            guard group.uuid != recycleBin else { return }
            let searchable = group.enableSearching ?? inherited
            if searchable {
                for entry in group.entries {
                    // Standard text fields, tags and unprotected custom fields (never a protected value).
                    let custom = entry.customFields.filter { !$0.value.isProtected }.map(\.value.text)
                    let haystack = [entry.title, entry.userName, entry.url, entry.notes] + entry.tags + custom
                    if haystack.contains(where: { $0.lowercased().contains(needle) }) {
                        found.append((entry, VaultPath(components: names + [entry.title])))
                    }
                }
            }
            for child in group.groups { visit(child, names: names + [child.name], searchable: searchable) }
        }
        visit(root, names: [], searchable: true)
        return found
    }
}

extension Vault {
    /// Every entry outside the recycle bin, with its path, in tree order (what an audit looks at).
    public func activeEntries() -> [(entry: Entry, path: VaultPath)] {
        let recycleBin = meta.recycleBinEnabled ? meta.recycleBinUUID : nil
        var found: [(Entry, VaultPath)] = []
        func visit(_ group: Group, names: [String]) {
            guard group.uuid != recycleBin else { return }
            for entry in group.entries { found.append((entry, VaultPath(components: names + [entry.title]))) }
            for child in group.groups { visit(child, names: names + [child.name]) }
        }
        visit(root, names: [])
        return found
    }
}

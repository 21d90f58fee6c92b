public import Foundation

/// Lookups and in-place surgery on the group tree, used by the edit operations.
extension Group {
    /// The group with `uuid` in this subtree.
    public func group(_ uuid: UUID) -> Group? {
        if self.uuid == uuid { return self }
        for child in groups {
            if let found = child.group(uuid) { return found }
        }
        return nil
    }

    /// The entry with `uuid` in this subtree and the UUID of the group holding it.
    public func entry(_ uuid: UUID) -> (entry: Entry, parent: UUID)? {
        if let entry = entries.first(where: { $0.uuid == uuid }) { return (entry, self.uuid) }
        for child in groups {
            if let found = child.entry(uuid) { return found }
        }
        return nil
    }

    /// The UUIDs of the groups from this one down to the group `uuid` (both included), if it is here.
    public func pathToGroup(_ uuid: UUID) -> [UUID]? {
        if self.uuid == uuid { return [uuid] }
        for child in groups {
            if let path = child.pathToGroup(uuid) { return [self.uuid] + path }
        }
        return nil
    }

    /// Runs `body` on the group `uuid` in this subtree; nil when it is not here.
    mutating func modifyGroup<T>(_ uuid: UUID, _ body: (inout Group) throws -> T) rethrows -> T? {
        if self.uuid == uuid { return try body(&self) }
        for index in groups.indices {
            if let result = try groups[index].modifyGroup(uuid, body) { return result }
        }
        return nil
    }

    /// Removes and returns the entry `uuid` with the group it was in.
    mutating func removeEntry(_ uuid: UUID) -> (entry: Entry, parent: UUID)? {
        if let index = entries.firstIndex(where: { $0.uuid == uuid }) {
            return (entries.remove(at: index), self.uuid)
        }
        for index in groups.indices {
            if let removed = groups[index].removeEntry(uuid) { return removed }
        }
        return nil
    }

    /// Removes and returns the subgroup `uuid` with the group it was in.
    mutating func removeGroup(_ uuid: UUID) -> (group: Group, parent: UUID)? {
        if let index = groups.firstIndex(where: { $0.uuid == uuid }) {
            return (groups.remove(at: index), self.uuid)
        }
        for index in groups.indices {
            if let removed = groups[index].removeGroup(uuid) { return removed }
        }
        return nil
    }

    /// Every entry and group UUID in this subtree, this group included.
    var allUUIDs: [UUID] {
        var result: [UUID] = []
        forEachGroup { group, _ in
            result.append(group.uuid)
            result.append(contentsOf: group.entries.map(\.uuid))
        }
        return result
    }
}

internal import MyPassCore

/// The field-level three-way merge of one group's own properties (name, notes, icon, settings,
/// tags, custom data); children and parent are merged by `VaultMerger`.
struct GroupMerger {
    let ancestor: Group?
    /// The ancestor is one side's version that changed none of the group's own fields (inferred
    /// without a base): both sides then count as able to have changed a field, whatever their times.
    var ancestorIsInferred = false
    let local: Group
    let remote: Group

    /// The merged group (without children), the names of the properties taken from the remote and of
    /// those both sides changed, and how each differing property was decided.
    func merge() -> (group: Group, fromRemote: [String], conflicts: [String], decisions: [PropertyDecision]) {
        // KeePassXC's bookkeeping item alone (with the time it bumps) changes nothing (MERGE.md rule 4).
        if changedProperties(local, remote) == 0 && local.customData != remote.customData {
            return (local, [], [], [])
        }
        let threeWay = ThreeWay(
            ancestor: ancestor, local: local, remote: remote,
            localActive: ancestorIsInferred || ancestor.map { local.times.lastModified >= $0.times.lastModified } ?? true,
            remoteActive: ancestorIsInferred || ancestor.map { remote.times.lastModified >= $0.times.lastModified } ?? true)
        let remoteWins = remote.times.lastModified > local.times.lastModified
            || (remote.times.lastModified == local.times.lastModified && remote.name > local.name)
        var merged = local
        var fromRemote: [String] = []
        var conflicts: [String] = []
        var decisions: [PropertyDecision] = []
        func resolve<T: Equatable>(_ name: String, _ value: (Group) -> T, _ apply: (inout Group) -> Void) {
            let choice = threeWay.pick(value)
            if let decided = threeWay.decision(name, value, state: { .value(String(describing: $0)) },
                                               takesRemote: choice == .remote || (choice == .conflict && remoteWins)) {
                decisions.append(decided)
            }
            switch choice {
            case .local: break
            case .remote:
                apply(&merged)
                fromRemote.append(name)
            case .conflict:
                conflicts.append(name)
                if remoteWins {
                    apply(&merged)
                    fromRemote.append(name)
                }
            }
        }
        resolve("Name", { $0.name }) { $0.name = remote.name }
        resolve("Notes", { $0.notes }) { $0.notes = remote.notes }
        resolve("Icon", { $0.iconID }) { $0.iconID = remote.iconID }
        resolve("CustomIcon", { $0.customIconUUID }) { $0.customIconUUID = remote.customIconUUID }
        resolve("DefaultAutoTypeSequence", { $0.defaultAutoTypeSequence }) { $0.defaultAutoTypeSequence = remote.defaultAutoTypeSequence }
        resolve("EnableAutoType", { $0.enableAutoType }) { $0.enableAutoType = remote.enableAutoType }
        resolve("EnableSearching", { $0.enableSearching }) { $0.enableSearching = remote.enableSearching }
        resolve("Tags", { $0.tags.sorted() }) { $0.tags = remote.tags }
        // Custom data per key: groups keep no history, so an item is never lost to another's edit.
        let keys = orderedUnion(local.customData.map(\.key), remote.customData.map(\.key), ancestor?.customData.map(\.key) ?? [])
        var items = Dictionary(local.customData.map { ($0.key, $0) }, uniquingKeysWith: { first, _ in first })
        for key in keys where key != CustomDataItem.bookkeepingKey {
            let value: (Group) -> String? = { group in group.customData.first { $0.key == key }?.value }
            // An inferred ancestor is one side's own version: it cannot tell that the other side removed a key.
            let knownToAncestor = !ancestorIsInferred && ancestor?.customData.contains { $0.key == key } == true
            if !knownToAncestor && (value(local) == nil) != (value(remote) == nil) {
                // Added on one side (the other never had it): kept whatever the times say.
                if value(local) == nil {
                    items[key] = remote.customData.first { $0.key == key }
                    fromRemote.append("CustomData '\(key)'")
                }
                continue
            }
            resolve("CustomData '\(key)'", value) { _ in items[key] = remote.customData.first { $0.key == key } }
        }
        let bookkeeping = (fromRemote.isEmpty ? local : remoteWins ? remote : local).customData.first(where: \.isBookkeeping)
        items[CustomDataItem.bookkeepingKey] = bookkeeping
        merged.customData = keys.compactMap { items[$0] }
        resolve("Expiry", { [$0.times.expires ? 1 : 0, $0.times.expiryTime.secondsSinceYearOne] }) {
            $0.times.expires = remote.times.expires
            $0.times.expiryTime = remote.times.expiryTime
        }
        resolve("Unknown data", { $0.preserved }) { $0.preserved = remote.preserved }
        merged.times.lastModified = max(local.times.lastModified, remote.times.lastModified)
        let newer = remote.times.lastModified > local.times.lastModified ? remote : local
        if !fromRemote.isEmpty && fromRemote.count < changedProperties(local, remote)
            || ancestorIsInferred && changedProperties(merged, newer) > 0 {
            // Some properties from each side, or the older side's change over a newer time that only
            // a child change explains: a new version, newer than both (merging it again is a no-op).
            merged.times.lastModified.secondsSinceYearOne += 1
        }
        merged.times.lastAccessed = max(local.times.lastAccessed, remote.times.lastAccessed)
        merged.times.usageCount = max(local.times.usageCount, remote.times.usageCount)
        merged.times.created = min(local.times.created, remote.times.created)
        return (merged, fromRemote, conflicts, decisions)
    }

    /// How many of the merged properties differ between the two sides.
    private func changedProperties(_ a: Group, _ b: Group) -> Int {
        var count = 0
        if a.name != b.name { count += 1 }
        if a.notes != b.notes { count += 1 }
        if a.iconID != b.iconID { count += 1 }
        if a.customIconUUID != b.customIconUUID { count += 1 }
        if a.defaultAutoTypeSequence != b.defaultAutoTypeSequence { count += 1 }
        if a.enableAutoType != b.enableAutoType { count += 1 }
        if a.enableSearching != b.enableSearching { count += 1 }
        if Set(a.tags) != Set(b.tags) { count += 1 }
        let aData = Dictionary(a.customData.content.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
        let bData = Dictionary(b.customData.content.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
        count += Set(aData.keys).union(bData.keys).filter { aData[$0] != bData[$0] }.count
        if a.times.expires != b.times.expires || a.times.expiryTime != b.times.expiryTime { count += 1 }
        if a.preserved != b.preserved { count += 1 }
        return count
    }
}

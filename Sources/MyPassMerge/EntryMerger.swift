internal import Foundation
internal import MyPassCore

/// The field-level three-way merge of one entry present on both sides (MERGE.md rules 2-5, 10).
struct EntryMerger {
    /// The most recent version both sides share (decides which side edited which property).
    let ancestor: Entry?
    /// The base's version, whose history tells which history items a side removed.
    let historyAncestor: Entry?
    let local: Entry
    let remote: Entry
    /// Where `ancestor` came from, and how protected values are shown; nil: no explanation wanted.
    var explaining: (ancestor: FieldDecision.Ancestor, fingerprint: SecretFingerprint)?

    /// What the merge of one entry produced.
    struct Outcome {
        var entry: Entry
        /// Properties taken from the remote side.
        var fromRemote: [String] = []
        /// Properties both sides changed differently.
        var conflicts: [String] = []
        /// The conflicting properties whose value came from the remote side (changed there later).
        var conflictsWonByRemote: [String] = []
        var historyAdded = 0
        var historyRemoved = 0
        /// Every property the sides differed on, or both changed (when explaining).
        var decisions: [PropertyDecision] = []
    }

    /// A side counts as having edited a property only when its version is not older than the
    /// ancestor (a stale copy changes nothing).
    private var localActive: Bool { ancestor.map { !Self.isSuperseded(local, by: $0) } ?? true }
    private var remoteActive: Bool { ancestor.map { !Self.isSuperseded(remote, by: $0) } ?? true }

    /// Whether `version` is older than `ancestor`, or from the same second and already in its history
    /// (timestamps have whole seconds: an edit made in the second of the version it edits).
    /// A version the ancestor holds in its history is superseded whatever its time (an edit made in
    /// the same second as the version it edits); otherwise an older version is (MERGE.md rule 3).
    static func isSuperseded(_ version: Entry, by ancestor: Entry) -> Bool {
        if ancestor.history.contains(where: { $0.isSameVersion(as: version) }) { return true }
        return version.times.lastModified < ancestor.times.lastModified
    }

    /// Whether the remote version wins ties and conflicts: newer LastModificationTime, then the larger
    /// content digest (deterministic and the same from both devices).
    var remoteIsNewer: Bool {
        if remote.times.lastModified != local.times.lastModified {
            return remote.times.lastModified > local.times.lastModified
        }
        return remote.contentDigest.lexicographicallyPrecedes(local.contentDigest) == false
            && remote.contentDigest != local.contentDigest
    }

    private typealias Pick = ThreeWay<Entry>.Pick

    /// How many of each history's last versions up to the ancestor tell a stale line from a change back.
    static let priorVersionsConsulted = 16

    /// The three-way choice, with each side's history items newer than the ancestor (to see a value
    /// changed back to the ancestor's, MERGE.md rule 14).
    private func makeThreeWay() -> ThreeWay<Entry> {
        var threeWay = ThreeWay(ancestor: ancestor, local: local, remote: remote, localActive: localActive, remoteActive: remoteActive,
                                conflictRule: .conflictFieldChangedLater)
        if let ancestor {
            let since = ancestor.times.lastModified
            threeWay.localEarlier = local.history.filter { $0.times.lastModified > since }
            threeWay.remoteEarlier = remote.history.filter { $0.times.lastModified > since }
            // Bounded: a stale line's value is the one just before the ancestor's change.
            threeWay.priorVersions = [ancestor.history, local.history, remote.history].flatMap { history in
                history.filter { $0.times.lastModified <= since }.suffix(Self.priorVersionsConsulted)
            }
        }
        return threeWay
    }

    /// The side whose line already holds every version of the other — its current version and every
    /// item of its history its limits left room for: its version is the merge, history included. Nil
    /// when each side has something new (a history item the other lacks is something new: taking the
    /// other whole would lose it).
    func containingSide(maxItems: Int, maxSize: Int64, binarySize: (BinaryID) -> Int) -> Entry? {
        if local.times.lastModified >= remote.times.lastModified,
           holdsEveryVersion(of: remote, in: local, maxItems: maxItems, maxSize: maxSize, binarySize: binarySize), !cleanedHistory(remote) {
            return local
        }
        if remote.times.lastModified >= local.times.lastModified,
           holdsEveryVersion(of: local, in: remote, maxItems: maxItems, maxSize: maxSize, binarySize: binarySize), !cleanedHistory(local) {
            return remote
        }
        return nil
    }

    /// Whether `container`'s line holds `other`'s current version (as its own, or in its history, also
    /// as a touched copy: moved or recycled later without a property changed, as KeePassXC saves it)
    /// and every item of its history. At its history limit (`maxItems`) holding `other`'s current version in
    /// its history is enough: its older items were trimmed there after it, as the limit allows, and
    /// taking them in again would trim others (the same merge made twice would not agree). The same
    /// version holds `other`'s items it lacks when they are older than those of `other`'s line it kept
    /// and its limits leave no room for them: merged in, they would be trimmed first (MERGE.md rule 15).
    private func holdsEveryVersion(of other: Entry, in container: Entry, maxItems: Int, maxSize: Int64,
                                   binarySize: (BinaryID) -> Int) -> Bool {
        let sameVersion = container.isSameVersion(as: other)
        guard sameVersion || container.history.contains(where: { $0.isSameVersion(as: other) || $0.isTouched(from: other) }) else {
            return false
        }
        if !sameVersion && maxItems >= 0 && container.history.count >= maxItems { return true }
        let held = Set(container.history.map(VersionKey.init))
        let missing = other.history.filter { !held.contains(VersionKey($0)) }
        guard sameVersion, !missing.isEmpty else { return missing.isEmpty }
        // Trimmed there: older than every item of `other`'s line the container kept (the versions a
        // merge combined are kept whatever their age, so they do not count), and no room for them.
        let otherKeys = Set(other.history.map(VersionKey.init))
        if let oldestKept = container.history.filter({ otherKeys.contains(VersionKey($0)) }).map(\.times.lastModified).min(),
           missing.contains(where: { $0.times.lastModified > oldestKept }) {
            return false
        }
        var probe = container
        probe.history = missing + container.history
        probe.trimHistory(maxItems: maxItems, maxSize: maxSize, binarySize: binarySize)
        return probe.history.count <= container.history.count
    }

    /// Whether `side` removed history items the base's version has (a user cleaned history there).
    private func cleanedHistory(_ side: Entry) -> Bool {
        guard let historyAncestor, !historyAncestor.history.isEmpty else { return false }
        let kept = Set(side.history.map(VersionKey.init))
        return historyAncestor.history.contains { !kept.contains(VersionKey($0)) }
    }

    /// Whether the remote side changed a property later than the local side (MERGE.md rule 5), with
    /// both change times. The same second: the larger value by `order` (its bytes), which depends
    /// neither on the direction of the merge nor on what else the versions hold, so that devices
    /// merging in any order pick the same value.
    private func remoteChangedLater<T: Equatable>(_ value: (Entry) -> T, order: (T) -> String) -> (Bool, local: Timestamp, remote: Timestamp) {
        let since = ancestor?.times.lastModified
        let localTime = FieldChangeTime.of(local, value, after: since), remoteTime = FieldChangeTime.of(remote, value, after: since)
        guard localTime == remoteTime else { return (remoteTime > localTime, localTime, remoteTime) }
        let localOrder = order(value(local)).utf8, remoteOrder = order(value(remote)).utf8
        return (localOrder.lexicographicallyPrecedes(remoteOrder), localTime, remoteTime)
    }

    func merge(historyMaxItems: Int, historyMaxSize: Int64, binarySize: (BinaryID) -> Int) -> Outcome {
        if local.withoutHistory == remote.withoutHistory && local.history == remote.history && local.times == remote.times {
            return Outcome(entry: local)
        }
        // KeePassXC's bookkeeping item alone (with the time it bumps) changes nothing (MERGE.md rule 4).
        if local.hasSameContent(as: remote) && local.customData != remote.customData && local.history.map(VersionKey.init) == remote.history.map(VersionKey.init) {
            return Outcome(entry: local)
        }
        let container = containingSide(maxItems: historyMaxItems, maxSize: historyMaxSize, binarySize: binarySize)
        // Nothing to decide when one side holds the other's version, unless an explanation is wanted.
        if let container, explaining == nil { return whole(container) }
        let remoteWins = remoteIsNewer
        let threeWay = makeThreeWay()
        var merged = local
        var fromRemote: [String] = []
        var conflicts: [String] = []

        var decisions: [PropertyDecision] = []

        var conflictsWonByRemote: [String] = []
        /// Resolves one property: `apply` copies the remote value into `merged`; `state` shows a value
        /// in the explanation.
        func resolve<T: Equatable>(_ name: String, _ value: (Entry) -> T, state: (T) -> FieldState,
                                   order: (T) -> String = orderOfValue, _ apply: () -> Void) {
            let choice = threeWay.pick(value)
            let later = choice == .conflict ? remoteChangedLater(value, order: order) : nil
            if explaining != nil, var decided = threeWay.decision(name, value, state: state,
                                                                 takesRemote: choice == .remote || later?.0 == true) {
                if let later {
                    decided.localTime = later.local
                    decided.remoteTime = later.remote
                }
                decisions.append(decided)
            }
            switch choice {
            case .local: return
            case .remote:
                apply()
                fromRemote.append(name)
            case .conflict:
                conflicts.append(name)
                if later?.0 == true {
                    apply()
                    fromRemote.append(name)
                    conflictsWonByRemote.append(name)
                }
            }
        }
        func shown<T>(_ value: T?) -> FieldState { value.map { .value(String(describing: $0)) } ?? .absent }
        func shown<T>(_ value: T) -> FieldState { .value(String(describing: value)) }
        let secret = explaining?.fingerprint

        // The winning side's order of fields, tags, attachments and custom data, the other's additions after.
        let (first, second) = remoteWins ? (remote, local) : (local, remote)
        let keys = orderedUnion(first.fields.map(\.key), second.fields.map(\.key), ancestor?.fields.map(\.key) ?? [])
        for key in keys {
            resolve(key, { $0.effectiveField(key) }, state: { secret?.state($0) ?? .absent },
                    order: { value in value.map { ($0.isProtected ? "p:" : "t:") + $0.text } ?? "" }) { merged.setField(key, remote.field(key)) }
        }
        merged.fields = keys.compactMap { key in merged.fields.first { $0.key == key } }
        // Tags as a set: additions and removals from both sides.
        let tagChoice = mergeSet(first.tags, second.tags, ancestor?.tags)
        if Set(tagChoice) != Set(local.tags) { fromRemote.append("Tags") }
        if explaining != nil, threeWay.rule({ Set($0.tags) }) != nil {
            let tags: (Entry) -> FieldState = { .value($0.tags.sorted().joined(separator: ", ")) }
            let side: FieldDecision.Side = Set(tagChoice) == Set(local.tags) ? .local : Set(tagChoice) == Set(remote.tags) ? .remote : .both
            decisions.append(PropertyDecision(field: "Tags", base: ancestor.map(tags), local: tags(local), remote: tags(remote), result: side,
                                     rule: ancestor == nil ? .noAncestorNewerWins : .setUnion))
        }
        merged.tags = tagChoice
        // Attachments by name.
        let names = orderedUnion(first.attachments.map(\.name), second.attachments.map(\.name), ancestor?.attachments.map(\.name) ?? [])
        for name in names {
            let value: (Entry) -> BinaryID? = { entry in entry.attachments.first { $0.name == name }?.binary }
            resolve("Attachment '\(name)'", value, state: { $0 == nil ? .absent : .value("attached") }) {
                merged.attachments.removeAll { $0.name == name }
                if let id = value(remote) { merged.attachments.append(Attachment(name: name, binary: id)) }
            }
        }
        merged.attachments = names.compactMap { name in merged.attachments.first { $0.name == name } }
        resolve("Icon", { $0.iconID }, state: shown) { merged.iconID = remote.iconID }
        resolve("CustomIcon", { $0.customIconUUID }, state: shown) { merged.customIconUUID = remote.customIconUUID }
        resolve("ForegroundColor", { $0.foregroundColor }, state: shown) { merged.foregroundColor = remote.foregroundColor }
        resolve("BackgroundColor", { $0.backgroundColor }, state: shown) { merged.backgroundColor = remote.backgroundColor }
        resolve("OverrideURL", { $0.overrideURL }, state: shown) { merged.overrideURL = remote.overrideURL }
        resolve("QualityCheck", { $0.qualityCheck }, state: shown) { merged.qualityCheck = remote.qualityCheck }
        resolve("AutoType enabled", { $0.autoType.isEnabled }, state: shown) { merged.autoType.isEnabled = remote.autoType.isEnabled }
        resolve("AutoType obfuscation", { $0.autoType.dataTransferObfuscation }, state: shown) {
            merged.autoType.dataTransferObfuscation = remote.autoType.dataTransferObfuscation
        }
        resolve("AutoType sequence", { $0.autoType.defaultSequence }, state: shown) { merged.autoType.defaultSequence = remote.autoType.defaultSequence }
        let windows = Self.associationOrder(local: local.autoType.keyedAssociations.map(\.key),
                                            remote: remote.autoType.keyedAssociations.map(\.key),
                                            ancestor: ancestor?.autoType.keyedAssociations.map(\.key) ?? [])
        var associations = Dictionary(local.autoType.keyedAssociations.map { ($0.key, $0.association) }, uniquingKeysWith: { first, _ in first })
        let remoteAssociations = Dictionary(remote.autoType.keyedAssociations.map { ($0.key, $0.association) }, uniquingKeysWith: { first, _ in first })
        for window in windows {
            resolve("AutoType window '\(window)'", { $0.autoType.sequence(forWindowKey: window) }, state: shown) {
                associations[window] = remoteAssociations[window]
            }
        }
        merged.autoType.associations = windows.compactMap { associations[$0] }
        resolve("AutoType unknown data", { $0.autoType.preserved }, state: { .value("\($0.count) element(s)") }) {
            merged.autoType.preserved = remote.autoType.preserved
        }
        resolve("Expiry", { Expiry(expires: $0.times.expires, at: $0.times.expiryTime) },
                state: { .value($0.expires ? "expires \($0.at)" : "never expires") }) {
            merged.times.expires = remote.times.expires
            merged.times.expiryTime = remote.times.expiryTime
        }
        let dataKeys = orderedUnion(first.customData.map(\.key), second.customData.map(\.key), ancestor?.customData.map(\.key) ?? [])
        for key in dataKeys where key != CustomDataItem.bookkeepingKey {
            let value: (Entry) -> CustomDataItem? = { entry in entry.customData.first { $0.key == key } }
            resolve("CustomData '\(key)'", value, state: { shown($0?.value) }) {
                merged.customData.removeAll { $0.key == key }
                if let item = value(remote) { merged.customData.append(item) }
            }
        }
        // The bookkeeping item follows the version whose content the merge is, else the newer one.
        let keeper = merged.hasSameContent(as: local) ? local : merged.hasSameContent(as: remote) ? remote : (remoteWins ? remote : local)
        merged.customData.removeAll { $0.isBookkeeping }
        merged.customData += keeper.customData.filter(\.isBookkeeping)
        merged.customData = dataKeys.compactMap { key in merged.customData.first { $0.key == key } }
        resolve("Unknown data", { $0.preserved }, state: { .value("\($0.count) element(s)") }) { merged.preserved = remote.preserved }

        // Times: the newest of both sides. A version that is neither side's content is a new version at
        // that same second; both inputs go into its history, which is how a later merge knows them as
        // its ancestors (isSuperseded). Never a second later: that could lie in the future, and an edit
        // made right after the merge (by KeePassXC, say) would then look older than what it edited.
        merged.times.lastModified = max(local.times.lastModified, remote.times.lastModified)
        merged.times.lastAccessed = max(local.times.lastAccessed, remote.times.lastAccessed)
        merged.times.usageCount = max(local.times.usageCount, remote.times.usageCount)
        merged.times.created = min(local.times.created, remote.times.created)
        if let container {
            var outcome = whole(container)
            outcome.decisions = decisions
            return outcome
        }
        // History: union, items removed on a side since the ancestor dropped, both current versions kept
        // unless the result is exactly them.
        var outcome = Outcome(entry: merged, fromRemote: fromRemote, conflicts: conflicts,
                              conflictsWonByRemote: conflictsWonByRemote, decisions: decisions)
        mergeHistory(into: &outcome, maxItems: historyMaxItems, maxSize: historyMaxSize, binarySize: binarySize)
        return outcome
    }

    /// The result when one side's line already holds the other's version (`containingSide`): that
    /// side as it is, history included (it trimmed or cleaned it since), with the access bookkeeping
    /// of both; no property is decided again, so merging a result with an input changes nothing.
    private func whole(_ container: Entry) -> Outcome {
        var entry = container
        entry.times.lastAccessed = max(local.times.lastAccessed, remote.times.lastAccessed)
        entry.times.usageCount = max(local.times.usageCount, remote.times.usageCount)
        entry.times.created = min(local.times.created, remote.times.created)
        entry.times.locationChanged = local.times.locationChanged
        entry.previousParentGroup = local.previousParentGroup
        var outcome = Outcome(entry: entry)
        if !container.isSameVersion(as: local) { outcome.fromRemote = VaultDiff.entryFields(local, container) }
        let localKeys = Set(local.history.map(VersionKey.init)), finalKeys = Set(container.history.map(VersionKey.init))
        outcome.historyAdded = finalKeys.subtracting(localKeys).count
        outcome.historyRemoved = localKeys.subtracting(finalKeys).count
        return outcome
    }

    private func mergeHistory(into outcome: inout Outcome, maxItems: Int, maxSize: Int64, binarySize: (BinaryID) -> Int) {
        func key(_ entry: Entry) -> VersionKey { VersionKey(entry) }
        let localKeys = Set(local.history.map(key))
        let remoteKeys = Set(remote.history.map(key))
        let ancestorKeys = Set(historyAncestor?.history.map(key) ?? [])
        let historyBaseTime = historyAncestor?.times.lastModified
        let localCleans = historyBaseTime.map { local.times.lastModified >= $0 } ?? false
        let remoteCleans = historyBaseTime.map { remote.times.lastModified >= $0 } ?? false
        var items: [VersionKey: Entry] = [:]
        /// Two copies of one version (same time and content) may differ in location or access
        /// bookkeeping: keep the smaller by a fixed order, so both devices keep the same copy.
        func keep(_ item: Entry, as itemKey: VersionKey) {
            if let existing = items[itemKey], !precedes(item, existing) { return }
            items[itemKey] = item
        }
        for item in local.history + remote.history {
            let itemKey = key(item)
            // Present in the ancestor but removed by a side that edited since: the user cleaned history there.
            let removedLocally = localCleans && !localKeys.contains(itemKey)
            let removedRemotely = remoteCleans && !remoteKeys.contains(itemKey)
            if ancestorKeys.contains(itemKey) && (removedLocally || removedRemotely) { continue }
            keep(item, as: itemKey)
        }
        let mergedKey = key(outcome.entry.withoutHistory)
        // The versions this merge combined are never trimmed by it (MERGE.md rule 10): one that lost a
        // conflict keeps its value, and each is how the next merge with that side knows it as an
        // ancestor (trimmed, the same merge made again would find a conflict and add history).
        // Both sides' versions holding the merged content made the same change: one change, no history
        // item for it (MERGE.md rule 15). One side's version holding it under the other's later time
        // (the other saved the entry later without a change of its own, or lost every change it made)
        // is kept: it is when that side set its values (`FieldChangeTime`), which the result's later
        // time would otherwise claim, and a third device's change made in between would win or lose
        // by the order of the merges. A side whose version is the ancestor changed nothing: its
        // version is the other side's past, trimmed there as the limits allow.
        let bothHoldMerged = local.hasSameContent(as: outcome.entry) && remote.hasSameContent(as: outcome.entry)
        var losers = Set<VersionKey>()
        for version in [local, remote] {
            let versionKey = key(version)
            guard versionKey != mergedKey, !bothHoldMerged,
                  !version.hasSameContent(as: outcome.entry) || ancestor.map({ version.times.lastModified > $0.times.lastModified }) ?? true,
                  ancestor.map({ !version.isSameVersion(as: $0) }) ?? true else { continue }
            keep(version.withoutHistory, as: versionKey)
            losers.insert(versionKey)
        }
        items[mergedKey] = nil
        losers.remove(mergedKey)
        // Oldest first; versions of the same second in the order the sides' histories have them (they
        // were made in that order), else by digest.
        let localOrder = Dictionary(local.history.enumerated().map { (key($0.element), $0.offset) }, uniquingKeysWith: { first, _ in first })
        let remoteOrder = Dictionary(remote.history.enumerated().map { (key($0.element), $0.offset) }, uniquingKeysWith: { first, _ in first })
        var history = items.sorted { lhs, rhs in
            if lhs.key.time != rhs.key.time { return lhs.key.time < rhs.key.time }
            if let left = localOrder[lhs.key], let right = localOrder[rhs.key] { return left < right }
            if let left = remoteOrder[lhs.key], let right = remoteOrder[rhs.key] { return left < right }
            return lhs.key.version.contentDigest.lexicographicallyPrecedes(rhs.key.version.contentDigest)
        }.map(\.value)
        var trimmed = outcome.entry
        trimmed.history = history.filter { !losers.contains(key($0)) }
        // A merge does not trim the history below what either side already keeps (trimming is the
        // editing client's); the combined versions count toward that, the older items make room.
        let limit = maxItems < 0 ? maxItems : max(max(maxItems, local.history.count, remote.history.count) - losers.count, 0)
        trimmed.trimHistory(maxItems: limit,
                            maxSize: maxSize, binarySize: binarySize)
        let kept = Set(trimmed.history.map(key)).union(losers)
        history = history.filter { kept.contains(key($0)) }
        let localSet = Set(local.history.map(key))
        let finalKeys = Set(history.map(key))
        outcome.historyAdded = finalKeys.subtracting(localSet).count
        outcome.historyRemoved = localSet.subtracting(finalKeys).count
        outcome.entry.history = history
    }

    /// The order of the merged window associations: a side's own order when the result holds exactly
    /// its windows and not the other's; else the ancestor's order, then the windows added since by
    /// their keys. It depends on the windows only, never on the direction or order of merges, so
    /// that devices merging in any order write the same list.
    static func associationOrder(local: [String], remote: [String], ancestor: [String]) -> [String] {
        let all = orderedUnion(local, remote, ancestor)
        let union = Set(all), localSet = Set(local), remoteSet = Set(remote)
        if local == remote || (union == localSet && union != remoteSet) { return local }
        if union == remoteSet && union != localSet { return remote }
        let known = Set(ancestor)
        return ancestor.filter(union.contains) + all.filter { !known.contains($0) }.sorted()
    }

    /// Three-way merge of a set (tags): what either side added, minus what either side removed.
    /// Both sides holding the same set keep it, as any property both sides agree on (`ThreeWay.pick`):
    /// an ancestor found in shared history can be newer than both sides' versions (a client whose
    /// clock ran ahead saved it), and both sides then count as stale.
    private func mergeSet(_ first: [String], _ second: [String], _ ancestor: [String]?) -> [String] {
        guard let ancestor, Set(first) != Set(second) else { return orderedUnion(first, second, []) }
        let base = Set(ancestor)
        let localTags = localActive ? Set(local.tags) : base
        let remoteTags = remoteActive ? Set(remote.tags) : base
        let removed = base.subtracting(localTags).union(base.subtracting(remoteTags))
        let added = localTags.subtracting(base).union(remoteTags.subtracting(base))
        let result = base.subtracting(removed).union(added)
        return orderedUnion(first, second, ancestor).filter { result.contains($0) }
    }
}

/// How a value ranks when both sides changed it in the same second: by its text; no value ranks
/// lowest (a value set wins over one removed in the same second).
func orderOfValue<T>(_ value: T) -> String {
    if let optional = value as? any AbsentValue, optional.isAbsent { return "" }
    return String(describing: value)
}

/// An optional value, asked whether it holds nothing.
protocol AbsentValue {
    var isAbsent: Bool { get }
}

extension Optional: AbsentValue {
    var isAbsent: Bool { self == nil }
}

/// A fixed order on copies of the same version: earlier location change, then fewer accesses.
private func precedes(_ a: Entry, _ b: Entry) -> Bool {
    let left = (a.times.locationChanged, a.times.lastAccessed, a.times.usageCount, a.previousParentGroup?.uuidString ?? "")
    let right = (b.times.locationChanged, b.times.lastAccessed, b.times.usageCount, b.previousParentGroup?.uuidString ?? "")
    return left < right
}

/// An entry's expiry as one property.
private struct Expiry: Equatable {
    let expires: Bool
    let at: Timestamp
}

/// `first` in order, then what `second` and `third` add, each once.
func orderedUnion(_ first: [String], _ second: [String], _ third: [String]) -> [String] {
    var seen = Set<String>()
    var result: [String] = []
    for item in first + second + third where seen.insert(item).inserted {
        result.append(item)
    }
    return result
}

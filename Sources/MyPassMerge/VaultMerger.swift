internal import Foundation
public import MyPassCore

/// The three-way merge of two vault snapshots against their common ancestor (MERGE.md). Pure and
/// deterministic: the same inputs always give the same vault and the same change log.
public enum VaultMerger {
    /// Merges `remote` into `local` with `base` as the version both last shared (nil when unknown:
    /// each entry's ancestor is then inferred from the history both sides share). The merge's working
    /// tables (indexes of every entry of three vaults) are handed to `release` at the end: the caller
    /// decides where they are freed (on a background thread, or never in a process about to exit).
    /// With `explaining`, the result's `decisions` say how each differing property was decided
    /// (protected values shown by that fingerprint only). `baseIsCertain`: the base was handed over by
    /// the user or the sync engine (`--base`, git's %O, Unison's archive), so an object in it that one
    /// side dropped without a tombstone and the other did not change is deleted (MERGE.md rule 6); a
    /// remembered base is not certain (a device may never have received the object).
    public static func merge(
        base: Vault?, baseIsCertain: Bool = false, local: Vault, remote: Vault, explaining: SecretFingerprint? = nil,
        release: (AnyObject) -> Void = { _ in }
    ) throws(MergeError) -> MergeResult {
        guard local.root.uuid == remote.root.uuid else { throw .differentDatabases }
        let run = MergeRun(base: base.map(VaultIndex.init), baseIsCertain: baseIsCertain && base != nil, local: VaultIndex(local),
                           remote: VaultIndex(remote), explaining: explaining)
        let result = run.execute()
        release(run)
        return result
    }
}

/// The state of one merge (a class: its tables are large and updated in place).
private final class MergeRun {
    let base: VaultIndex?
    let baseIsCertain: Bool
    let local: VaultIndex
    let remote: VaultIndex
    /// Entries kept against a deletion that never saw their edit, with that deletion's time: they go
    /// to the recycle bin (MERGE.md rule 7).
    private var keptFromUnseenDeletion: [UUID: Timestamp] = [:]

    /// Surviving groups (without children) and their parents.
    private var groups: [UUID: (group: Group, parent: UUID?)] = [:]
    /// Surviving entries and their parents.
    private var entries: UUIDTable<(entry: Entry, parent: UUID)>
    private var tombstones: [UUID: Timestamp] = [:]
    private var changes: [Change] = []
    private var warnings: [String] = []
    private var meta: Meta
    private let explaining: SecretFingerprint?
    private var decisions: [FieldDecision] = []

    init(base: VaultIndex?, baseIsCertain: Bool, local: VaultIndex, remote: VaultIndex, explaining: SecretFingerprint?) {
        self.base = base
        self.baseIsCertain = baseIsCertain
        self.local = local
        self.remote = remote
        self.meta = local.vault.meta
        self.explaining = explaining
        entries = UUIDTable(minimumCapacity: max(local.entries.count, remote.entries.count))
    }

    func execute() -> MergeResult {
        let mergedMeta = MetaMerger(ancestor: base?.vault.meta, local: local.vault.meta, remote: remote.vault.meta).merge()
        meta = mergedMeta.meta
        if !mergedMeta.changed.isEmpty {
            changes.append(Change(.metaChanged, .meta, uuid: nil, path: "/", title: meta.databaseName, fields: mergedMeta.changed))
        }
        if explaining != nil {
            record(mergedMeta.decisions, subject: .meta, uuid: nil, path: "/", ancestor: base == nil ? .none : .base)
        }
        tombstones = local.tombstones.merging(remote.tombstones) { max($0, $1) }
        mergeGroups()
        mergeEntries()
        foldRecycleBins()
        keepNamedRecycleBin()
        recycleEntriesKeptFromDeletion()
        restoreParentsOfSurvivors()
        removeCycles()
        for id in groups.keys.sorted(by: UUID.precedes) where id != local.rootUUID {
            if let mine = local.groups[id], let merged = groups[id], merged.parent != mine.parent {
                changes.append(Change(.moved, .group, uuid: id, path: remote.path(ofGroup: id), title: merged.group.name))
            }
        }
        let root = buildTree(local.rootUUID)
        for id in tombstones.keys where groups[id] != nil || entries[id] != nil { tombstones[id] = nil }
        var pool = BinaryPool()
        var used = Set<BinaryID>()
        for (entry, _) in entries.values { entry.collectBinaryReferences(into: &used) }
        for id in used.sorted() {
            if let binary = local.vault.binaries[id] ?? remote.vault.binaries[id] {
                pool.add(binary.data, isProtected: binary.isProtected)
            }
        }
        let deleted = tombstones.map { DeletedObject(uuid: $0.key, deletedAt: $0.value) }
            .sorted { ($0.deletedAt, $0.uuid.uuidString) < ($1.deletedAt, $1.uuid.uuidString) }
        let vault = Vault(
            meta: meta, root: root, deletedObjects: deleted, binaries: pool,
            preservedFileElements: unionByName(local.vault.preservedFileElements, remote.vault.preservedFileElements),
            preservedRootElements: unionByName(local.vault.preservedRootElements, remote.vault.preservedRootElements))
        return MergeResult(vault: vault, changes: changes, warnings: warnings, decisions: decisions)
    }

    // MARK: Groups

    private func mergeGroups() {
        for id in Set(local.groups.keys).union(remote.groups.keys).sorted(by: UUID.precedes) {
            let mine = local.groups[id], theirs = remote.groups[id]
            switch (mine, theirs) {
            case let (mine?, theirs?):
                let known = base?.groups[id]?.group
                let inferred = known == nil ? inferredAncestor(ofGroup: id, mine.group, theirs.group) : nil
                let fields = GroupMerger(ancestor: known ?? inferred, ancestorIsInferred: inferred != nil,
                                         local: mine.group, remote: theirs.group).merge()
                var group = fields.group
                let parent = mergeParent(base: base?.groups[id].map { ($0.parent, $0.group.times.locationChanged) },
                                         local: mine.parent, remote: theirs.parent,
                                         localTime: mine.group.times.locationChanged, remoteTime: theirs.group.times.locationChanged)
                if parent.fromRemote {
                    group.times.locationChanged = theirs.group.times.locationChanged
                    group.previousParentGroup = theirs.group.previousParentGroup
                }
                groups[id] = (group, parent.uuid)
                let path = remote.path(ofGroup: id)
                if explaining != nil {
                    record(fields.decisions, subject: .group, uuid: id, path: path,
                           ancestor: known != nil ? .base : inferred != nil ? .inferredFromHistory : .none)
                }
                // A group has no history to keep the losing side in: the log names the conflict when
                // the local value lost; a remote value that lost is a warning.
                let lostLocally = fields.conflicts.filter { fields.fromRemote.contains($0) }
                if !lostLocally.isEmpty {
                    changes.append(Change(.conflict, .group, uuid: id, path: path, title: group.name, fields: lostLocally,
                                          detail: "remote version is newer and current"))
                }
                if fields.conflicts.count > lostLocally.count {
                    warnings.append("group \(id.canonicalString): the remote side's change of \(fields.conflicts.filter { !lostLocally.contains($0) }.joined(separator: ", ")) was older and was not applied")
                }
                let updated = fields.fromRemote.filter { !fields.conflicts.contains($0) }
                if !updated.isEmpty {
                    changes.append(Change(.updated, .group, uuid: id, path: path, title: group.name, fields: updated))
                }
            case let (mine?, nil):
                if remote.groups[id] == nil, let deletedAt = droppedFromCertainBase(group: mine, droppedByRemote: true) {
                    tombstones[id] = max(tombstones[id] ?? deletedAt, deletedAt)
                    explainCertainDrop(.group, id, at: local.path(ofGroup: id), droppedBy: .remote)
                    continue  // Decided with its contents in restoreParentsOfSurvivors: deleted unless something lives in it.
                }
                explainPresence(.group, id, times: mine.group.times, at: local.path(ofGroup: id), on: .local, otherDeletedAt: remote.tombstones[id])
                if let deletedAt = remote.tombstones[id], deletedAt > lastChange(of: mine.group.times) {
                    continue  // Decided with its contents in restoreParentsOfSurvivors: deleted unless something lives in it.
                }
                groups[id] = (mine.group, mine.parent)
            case let (nil, theirs?):
                if let deletedAt = droppedFromCertainBase(group: theirs, droppedByRemote: false) {
                    tombstones[id] = max(tombstones[id] ?? deletedAt, deletedAt)
                    explainCertainDrop(.group, id, at: remote.path(ofGroup: id), droppedBy: .local)
                    continue
                }
                explainPresence(.group, id, times: theirs.group.times, at: remote.path(ofGroup: id), on: .remote, otherDeletedAt: local.tombstones[id])
                if let deletedAt = local.tombstones[id], deletedAt > lastChange(of: theirs.group.times) { continue }
                groups[id] = (theirs.group, theirs.parent)
                changes.append(Change(local.tombstones[id] == nil ? .added : .restored, .group, uuid: id,
                                      path: remote.path(ofGroup: id), title: theirs.group.name))
            case (nil, nil):
                break
            }
        }
    }

    /// Without a base (MERGE.md rule 2): a side whose version of group `id` was last modified only by
    /// a change of its children that the other side does not have did not change the group's own
    /// fields (KeePassXC bumps a group's time when an entry is added to it, moved in or out, or
    /// removed), so its version stands for the ancestor and the other side's field changes are taken.
    /// Nil when neither side or both sides are explained so.
    private func inferredAncestor(ofGroup id: UUID, _ mine: Group, _ theirs: Group) -> Group? {
        switch (Self.timeIsExplainedByChildren(of: id, in: local, comparedWith: remote)
                    || Self.timeIsExplainedByOwnMove(of: id, in: local, comparedWith: remote),
                Self.timeIsExplainedByChildren(of: id, in: remote, comparedWith: local)
                    || Self.timeIsExplainedByOwnMove(of: id, in: remote, comparedWith: local)) {
        case (true, false): mine
        case (false, true): theirs
        default: nil
        }
    }

    /// Whether group `id`'s LastModificationTime in `side` is the moment (within 2 s) of its own move,
    /// which `other` does not have (KeePass 2 bumps a group's time when it moves it): the move changed
    /// none of the group's own fields (MERGE.md rule 11).
    static func timeIsExplainedByOwnMove(of id: UUID, in side: VaultIndex, comparedWith other: VaultIndex) -> Bool {
        guard let record = side.groups[id], let otherRecord = other.groups[id] else { return false }
        let times = record.group.times
        guard record.parent != otherRecord.parent, times.locationChanged > otherRecord.group.times.locationChanged else { return false }
        return abs(times.lastModified.secondsSinceYearOne - times.locationChanged.secondsSinceYearOne) <= 2
    }

    /// Whether group `id`'s LastModificationTime in `side` is the moment (within 2 s) of a change of
    /// its children that `other` does not have: a child added or moved in (its creation time or
    /// LocationChanged), or one moved out or deleted (its LocationChanged where it went, or its tombstone).
    static func timeIsExplainedByChildren(of id: UUID, in side: VaultIndex, comparedWith other: VaultIndex) -> Bool {
        guard let record = side.groups[id] else { return false }
        let time = record.group.times.lastModified.secondsSinceYearOne
        func near(_ moment: Timestamp) -> Bool { abs(moment.secondsSinceYearOne - time) <= 2 }
        for child in record.childEntries where other.entries[child]?.parent != id {
            if let times = side.entries[child]?.entry.times, near(times.created) || near(times.locationChanged) { return true }
        }
        for child in record.childGroups where other.groups[child]?.parent != id {
            if let times = side.groups[child]?.group.times, near(times.created) || near(times.locationChanged) { return true }
        }
        let formerChildren = (other.groups[id]?.childEntries ?? []).filter { side.entries[$0]?.parent != id }
            + (other.groups[id]?.childGroups ?? []).filter { side.groups[$0]?.parent != id }
        for child in formerChildren {
            if let deleted = side.tombstones[child], near(deleted) { return true }
            if let times = side.entries[child]?.entry.times ?? side.groups[child]?.group.times, near(times.locationChanged) { return true }
        }
        return false
    }

    // MARK: Entries

    private func mergeEntries() {
        let maxItems = meta.historyMaxItems, maxSize = meta.historyMaxSize
        let localPool = local.vault.binaries, remotePool = remote.vault.binaries
        let ids = Set(local.entries.keys).union(remote.entries.keys).sorted(by: UUID.precedes)
        // Comparing and merging the entries both sides hold reads only the three indexes: done on all
        // cores first (most of a merge's time), then applied in order.
        let pairer = EntryPairer(base: base, baseIsCertain: baseIsCertain, local: local, remote: remote, explaining: explaining,
                                 historyMaxItems: maxItems, historyMaxSize: maxSize, localPool: localPool, remotePool: remotePool)
        let pairings = ids.parallelMap(chunkSize: 256) { id -> EntryPairer.Pairing? in
            guard let mine = pairer.local.entries[id], let theirs = pairer.remote.entries[id] else { return nil }
            return pairer.pairing(mine.entry, theirs.entry)
        }
        for (id, pairing) in zip(ids, pairings) {
            switch (local.entries[id], remote.entries[id], pairing) {
            case let (mine?, theirs?, .same?):
                let parent = mergeParent(base: base?.entries[id].map { ($0.parent, $0.entry.times.locationChanged) },
                                         local: mine.parent, remote: theirs.parent,
                                         localTime: mine.entry.times.locationChanged, remoteTime: theirs.entry.times.locationChanged)
                entries[id] = (mine.entry, parent.uuid ?? mine.parent)
                if explaining != nil && mine.parent != theirs.parent {
                    explainMove(mine: mine, theirs: theirs, parent: parent.uuid ?? mine.parent)
                }
            case let (mine?, theirs?, .merged(outcome, source)?):
                var entry = outcome.entry
                let parent = mergeParent(base: base?.entries[id].map { ($0.parent, $0.entry.times.locationChanged) },
                                         local: mine.parent, remote: theirs.parent,
                                         localTime: mine.entry.times.locationChanged, remoteTime: theirs.entry.times.locationChanged)
                entry.times.locationChanged = parent.fromRemote ? theirs.entry.times.locationChanged : mine.entry.times.locationChanged
                entry.previousParentGroup = parent.fromRemote ? theirs.entry.previousParentGroup : mine.entry.previousParentGroup
                entries[id] = (entry, parent.uuid ?? mine.parent)
                logEntry(outcome, entry: entry, movedFrom: parent.fromRemote && parent.uuid != mine.parent ? mine.parent : nil)
                explain(outcome, mine: mine, theirs: theirs, ancestor: source, parent: parent.uuid ?? mine.parent)
                if mine.entry.times.lastModified == theirs.entry.times.lastModified && !outcome.conflicts.isEmpty {
                    warnings.append("entry \(id.canonicalString) was changed on both sides at the same second; each field both changed in that second has the larger value, the other version is in its history")
                }
            case (_?, _?, nil):
                break  // Not reached: the parallel pass pairs every entry both sides hold.
            case let (mine?, nil, _):
                let path = entryPath(mine.parent, mine.entry, in: local)
                switch deletionOutcome(of: mine, deletedByRemote: true) {
                case .deleted(let certainDropAt):
                    if let certainDropAt {
                        tombstones[id] = max(tombstones[id] ?? certainDropAt, certainDropAt)
                        explainCertainDrop(.entry, id, at: path, droppedBy: .remote)
                    } else {
                        explainPresence(.entry, id, times: mine.entry.times, at: path, on: .local, otherDeletedAt: remote.tombstones[id])
                    }
                    changes.append(certainDropAt == nil ? Change(.deleted, .entry, uuid: id, path: path, title: mine.entry.title)
                        : Change(.deleted, .entry, uuid: id, path: path, title: mine.entry.title,
                                 detail: "dropped on the other side without a tombstone; the base is certain"))
                    continue
                case .keptInRecycleBin(let deletedAt):
                    explainUnseenDeletion(id, at: path, kept: .local, deletedAt: deletedAt)
                    keptFromUnseenDeletion[id] = deletedAt
                case .kept:
                    explainPresence(.entry, id, times: mine.entry.times, at: path, on: .local, otherDeletedAt: remote.tombstones[id])
                }
                entries[id] = (mine.entry, mine.parent)
            case let (nil, theirs?, _):
                let path = entryPath(theirs.parent, theirs.entry, in: remote)
                switch deletionOutcome(of: theirs, deletedByRemote: false) {
                case .deleted(let certainDropAt):
                    if let certainDropAt {
                        tombstones[id] = max(tombstones[id] ?? certainDropAt, certainDropAt)
                        explainCertainDrop(.entry, id, at: path, droppedBy: .local)
                        changes.append(Change(.deleted, .entry, uuid: id, path: path, title: theirs.entry.title,
                                              detail: "dropped here without a tombstone; the base is certain, so the tombstone is added"))
                    } else {
                        explainPresence(.entry, id, times: theirs.entry.times, at: path, on: .remote, otherDeletedAt: local.tombstones[id])
                    }
                    continue
                case .keptInRecycleBin(let deletedAt):
                    explainUnseenDeletion(id, at: path, kept: .remote, deletedAt: deletedAt)
                    keptFromUnseenDeletion[id] = deletedAt
                case .kept:
                    explainPresence(.entry, id, times: theirs.entry.times, at: path, on: .remote, otherDeletedAt: local.tombstones[id])
                }
                entries[id] = (theirs.entry, theirs.parent)
                changes.append(Change(local.tombstones[id] == nil ? .added : .restored, .entry, uuid: id,
                                      path: entryPath(theirs.parent, theirs.entry, in: remote), title: theirs.entry.title,
                                      detail: keptFromUnseenDeletion[id] == nil ? "" : Self.unseenDeletionDetail))
            case (nil, nil, _):
                break
            }
        }
    }

    private func logEntry(_ outcome: EntryMerger.Outcome, entry: Entry, movedFrom: UUID?) {
        let path = "/" + VaultPath.escaped(entry.title)
        var located = path
        if let parent = entries[entry.uuid]?.parent {
            located = (parent == local.rootUUID ? "" : (local.groups[parent] != nil ? local.path(ofGroup: parent) : remote.path(ofGroup: parent))) + path
        }
        if !outcome.conflicts.isEmpty {
            let remoteWon = outcome.conflictsWonByRemote, localWon = outcome.conflicts.filter { !remoteWon.contains($0) }
            let sides = [localWon.isEmpty ? nil : "local: \(localWon.joined(separator: ", "))",
                         remoteWon.isEmpty ? nil : "remote: \(remoteWon.joined(separator: ", "))"].compactMap { $0 }
            changes.append(Change(.conflict, .entry, uuid: entry.uuid, path: located, title: entry.title, fields: outcome.conflicts,
                                  detail: "each field from the side that changed it later (\(sides.joined(separator: "; "))); the other version is in history"))
        }
        let updated = outcome.fromRemote.filter { !outcome.conflicts.contains($0) }
        if !updated.isEmpty {
            changes.append(Change(.updated, .entry, uuid: entry.uuid, path: located, title: entry.title, fields: updated))
        }
        if movedFrom != nil {
            changes.append(Change(.moved, .entry, uuid: entry.uuid, path: located, title: entry.title))
        }
        if outcome.historyAdded > 0 {
            changes.append(Change(.historyMerged, .entry, uuid: entry.uuid, path: located, title: entry.title,
                                  detail: "\(outcome.historyAdded) history item(s) added"))
        }
        if outcome.historyRemoved > 0 {
            changes.append(Change(.historyTrimmed, .entry, uuid: entry.uuid, path: located, title: entry.title,
                                  detail: "\(outcome.historyRemoved) history item(s) removed"))
        }
    }

    // MARK: Deletions

    private lazy var rules = DeletionRules(base: base, baseIsCertain: baseIsCertain)
    private lazy var newestLocal = local.newestChange
    private lazy var newestRemote = remote.newestChange

    /// What becomes of entry `present`, which `other` does not hold (MERGE.md rules 6 and 7).
    private func deletionOutcome(of present: VaultIndex.EntryRecord, deletedByRemote: Bool) -> DeletionRules.Outcome {
        rules.entry(present, absentFrom: deletedByRemote ? remote : local) { deletedByRemote ? newestRemote : newestLocal }
    }

    /// The tombstone time when `other` dropped group `present` from a certain base; nil: not deleted so.
    private func droppedFromCertainBase(group present: VaultIndex.GroupRecord, droppedByRemote: Bool) -> Timestamp? {
        rules.droppedGroup(present, absentFrom: droppedByRemote ? remote : local) { droppedByRemote ? newestRemote : newestLocal }
    }

    /// Entries kept against a deletion that never saw their edit go to the recycle bin (created when
    /// the vault has none, with a UUID derived from the root's, so every device makes the same one);
    /// one already in the bin stays where it is.
    private func recycleEntriesKeptFromDeletion() {
        guard !keptFromUnseenDeletion.isEmpty, meta.recycleBinEnabled else { return }
        let bin: UUID
        if let existing = meta.recycleBinUUID, groups[existing] != nil {
            bin = existing
        } else {
            let created = keptFromUnseenDeletion.values.min()!
            bin = Self.mergeMadeBin(root: local.rootUUID)
            let group = groups[bin]?.group ?? Group(uuid: bin, name: "Recycle Bin", iconID: 43, times: Times(allAt: created), isExpanded: false,
                                                    enableAutoType: false, enableSearching: false)
            groups[bin] = (group, local.rootUUID)
            meta.recycleBinUUID = bin
            meta.recycleBinChanged = created
        }
        for (id, deletedAt) in keptFromUnseenDeletion.sorted(by: { UUID.precedes($0.key, $1.key) }) {
            // Moved elsewhere after the deletion (on a side that kept it): it stays where that later move
            // put it. A "move" into the place the ancestor had it moved nothing.
            guard let record = entries[id] else { continue }
            if isInside(record.parent, bin) {
                // Already in the bin: its place there dates from the deletion, so that a move another
                // device made before the deletion does not take it out again in a later merge.
                if record.entry.times.locationChanged <= deletedAt {
                    entries[id]?.entry.times.locationChanged = Timestamp(secondsSinceYearOne: deletedAt.secondsSinceYearOne + 1)
                }
                continue
            }
            let moved = base?.entries[id].map { $0.parent != record.parent } ?? true
            if moved && record.entry.times.locationChanged > deletedAt { continue }
            if local.entries[id] != nil {
                changes.append(Change(.moved, .entry, uuid: id, path: entryPath(record.parent, record.entry, in: local), title: record.entry.title,
                                      detail: Self.unseenDeletionDetail))
            }
            // The move is a change of its own, a second after the deletion and the entry's last move, so
            // that a later merge with a side holding the entry in its old place keeps it in the bin.
            let movedAt = max(record.entry.times.locationChanged, deletedAt)
            entries[id]?.entry.previousParentGroup = record.parent
            entries[id]?.entry.times.locationChanged = Timestamp(secondsSinceYearOne: movedAt.secondsSinceYearOne + 1)
            entries[id]?.parent = bin
        }
    }

    static let unseenDeletionDetail = "kept in the recycle bin: delete versus edit, the deletion never saw this edit"

    /// Whether group `id` is `ancestor` or below it in the merged tree.
    private func isInside(_ id: UUID, _ ancestor: UUID) -> Bool {
        var current: UUID? = id
        var steps = 0
        while let group = current, steps < 10_000 {
            if group == ancestor { return true }
            current = groups[group]?.parent
            steps += 1
        }
        return false
    }

    // MARK: Explanation

    /// An object one side dropped without a tombstone from a certain base, unchanged on the other side.
    private func explainCertainDrop(_ subject: Change.Subject, _ uuid: UUID, at path: String, droppedBy side: FieldDecision.Side) {
        guard explaining != nil else { return }
        let present = FieldState.value("present, unchanged since the base"), dropped = FieldState.value("dropped without a tombstone")
        decisions.append(FieldDecision(subject: subject, uuid: uuid, path: path, field: "Object", ancestor: .base, base: .value("present"),
                                       local: side == .local ? dropped : present, remote: side == .local ? present : dropped,
                                       result: side, rule: .droppedFromCertainBase))
    }

    /// An entry edited on `kept`'s side after the ancestor, deleted on the other side that never saw the edit.
    private func explainUnseenDeletion(_ uuid: UUID, at path: String, kept side: FieldDecision.Side, deletedAt: Timestamp) {
        guard explaining != nil else { return }
        let edited = FieldState.value("edited since the base"), deleted = FieldState.value("deleted \(deletedAt) without seeing the edit")
        decisions.append(FieldDecision(subject: .entry, uuid: uuid, path: path, field: "Object", ancestor: .base, base: .value("present"),
                                       local: side == .local ? edited : deleted, remote: side == .local ? deleted : edited,
                                       result: side, rule: .deletionDidNotSeeEdit))
    }

    /// Property decisions of one object, with its path.
    private func record(_ decided: [PropertyDecision], subject: Change.Subject, uuid: UUID?, path: String, ancestor: FieldDecision.Ancestor) {
        for decision in decided {
            decisions.append(FieldDecision(subject: subject, uuid: uuid, path: path, field: decision.field, ancestor: ancestor,
                                           base: decision.base, local: decision.local, remote: decision.remote,
                                           result: decision.result, rule: decision.rule))
        }
    }

    /// The decisions of one entry present on both sides, with its path and the versions' times.
    private func explain(_ outcome: EntryMerger.Outcome, mine: VaultIndex.EntryRecord, theirs: VaultIndex.EntryRecord,
                         ancestor: FieldDecision.Ancestor, parent: UUID) {
        guard explaining != nil else { return }
        let path = entryPath(parent, outcome.entry, in: local.groups[parent] != nil ? local : remote)
        for decided in outcome.decisions {
            let timed = [.conflictNewerWins, .noAncestorNewerWins, .staleVersionIgnored].contains(decided.rule)
            decisions.append(FieldDecision(subject: .entry, uuid: outcome.entry.uuid, path: path, field: decided.field, ancestor: ancestor,
                                           base: decided.base, local: decided.local, remote: decided.remote, result: decided.result,
                                           rule: decided.rule, localTime: decided.localTime ?? (timed ? mine.entry.times.lastModified : nil),
                                           remoteTime: decided.remoteTime ?? (timed ? theirs.entry.times.lastModified : nil)))
        }
        if mine.parent != theirs.parent { explainMove(mine: mine, theirs: theirs, parent: parent) }
    }

    /// An entry in different groups on the two sides.
    private func explainMove(mine: VaultIndex.EntryRecord, theirs: VaultIndex.EntryRecord, parent: UUID) {
        let baseRecord = base?.entries[mine.entry.uuid]
        let baseParent = baseRecord?.parent
        // A side in the base's place with a newer LocationChanged moved back (MERGE.md rule 14).
        func moved(_ record: VaultIndex.EntryRecord) -> Bool? {
            baseRecord.map { record.parent != $0.parent || record.entry.times.locationChanged > $0.entry.times.locationChanged }
        }
        func place(_ group: UUID?, _ index: VaultIndex) -> FieldState {
            guard let group else { return .absent }
            return .value(group == index.rootUUID ? "/" : index.path(ofGroup: group))
        }
        let rule: FieldDecision.Rule = switch (moved(mine), moved(theirs)) {
        case (true?, false?): .onlyLocalChanged
        case (false?, true?): .onlyRemoteChanged
        default: .moveByLocationChanged
        }
        decisions.append(FieldDecision(subject: .entry, uuid: mine.entry.uuid, path: entryPath(parent, mine.entry, in: local.groups[parent] != nil ? local : remote),
                                       field: "Location", ancestor: baseParent == nil ? .none : .base,
                                       base: baseParent.map { place($0, base!) }, local: place(mine.parent, local),
                                       remote: place(theirs.parent, remote), result: parent == mine.parent ? .local : .remote, rule: rule,
                                       localTime: mine.entry.times.locationChanged, remoteTime: theirs.entry.times.locationChanged))
    }

    /// An object only `side` has: added (or kept) unless the other side's deletion is newer than its last change.
    private func explainPresence(_ subject: Change.Subject, _ uuid: UUID, times: Times, at path: String, on side: FieldDecision.Side,
                                 otherDeletedAt: Timestamp?) {
        guard explaining != nil else { return }
        let present = FieldState.value("present, last changed \(lastChange(of: times))")
        let other: FieldState = otherDeletedAt.map { .value("deleted \($0)") } ?? .absent
        let deletionWins = otherDeletedAt.map { $0 > lastChange(of: times) } ?? false
        let winner: FieldDecision.Side = deletionWins ? (side == .local ? .remote : .local) : side
        decisions.append(FieldDecision(subject: subject, uuid: uuid, path: path, field: "Object", ancestor: .none, base: nil,
                                       local: side == .local ? present : other, remote: side == .local ? other : present,
                                       result: winner, rule: otherDeletedAt == nil ? .onlyOneSideHasIt : .deleteVersusEdit))
    }

    private func entryPath(_ parent: UUID, _ entry: Entry, in index: VaultIndex) -> String {
        (parent == index.rootUUID ? "" : index.path(ofGroup: parent)) + "/" + VaultPath.escaped(entry.title)
    }

    // MARK: Parents, bins, tree

    /// The merged parent: a move on one side wins; moves on both sides: the newer LocationChanged. A
    /// side back in the base's place with a LocationChanged newer than the base's moved back: a move
    /// too (MERGE.md rule 14).
    private func mergeParent(base: (parent: UUID?, time: Timestamp)?, local: UUID?, remote: UUID?, localTime: Timestamp, remoteTime: Timestamp)
        -> (uuid: UUID?, fromRemote: Bool) {
        // Same place on both sides: the later move's bookkeeping (LocationChanged, PreviousParentGroup).
        guard local != remote else { return (local, remoteTime > localTime) }
        if let base {
            let localMoved = local != base.parent || localTime > base.time, remoteMoved = remote != base.parent || remoteTime > base.time
            if localMoved != remoteMoved { return remoteMoved ? (remote, true) : (local, false) }
        }
        if remoteTime != localTime { return remoteTime > localTime ? (remote, true) : (local, false) }
        // The same second: a live place over a recycle bin (a move after a deletion keeps the entry alive).
        let localInBin = isRecycleBin(local), remoteInBin = isRecycleBin(remote)
        if localInBin != remoteInBin { return localInBin ? (remote, true) : (local, false) }
        let remoteFirst = (remote?.uuidString ?? "") > (local?.uuidString ?? "")
        return remoteFirst ? (remote, true) : (local, false)
    }

    /// Whether `group` is a recycle bin of either side or the one a merge makes.
    private func isRecycleBin(_ group: UUID?) -> Bool {
        guard let group else { return false }
        return group == local.vault.meta.recycleBinUUID || group == remote.vault.meta.recycleBinUUID
            || group == Self.mergeMadeBin(root: local.rootUUID)
    }

    /// The last time an object was edited or moved.
    private func lastChange(of times: Times) -> Timestamp {
        max(times.lastModified, times.locationChanged)
    }

    /// The UUID of the recycle bin a merge makes in the database with root group `root` (the same on
    /// every device, so that two merges make one bin).
    static func mergeMadeBin(root: UUID) -> UUID {
        var bytes = root.uuid
        bytes.0 ^= 0x52; bytes.1 ^= 0x42; bytes.15 ^= 0x01
        return UUID(uuid: bytes)
    }

    /// Both devices made a recycle bin: keep the one the merged setting names (a client's over one a
    /// merge made), move the other's contents into it, and drop the other with a tombstone (MERGE.md
    /// rules 9 and 11, `RecycleBinChoice`).
    private func foldRecycleBins() {
        guard let localBin = local.vault.meta.recycleBinUUID, let remoteBin = remote.vault.meta.recycleBinUUID,
              let kept = groups[localBin], let other = groups[remoteBin],
              let choice = RecycleBinChoice.fold(localBin: localBin, remoteBin: remoteBin, named: meta.recycleBinUUID,
                                                 mergeMade: Self.mergeMadeBin(root: local.rootUUID),
                                                 localHolds: { self.local.groups[$0] != nil }, remoteHolds: { self.remote.groups[$0] != nil })
        else { return }
        let (keep, drop) = (choice.keep, choice.drop)
        // The fold is a change of its own, one second after everything it touches, so that later
        // merges with either input see it as the newer state.
        var latest = max(kept.group.times.lastModified, other.group.times.lastModified,
                         kept.group.times.locationChanged, other.group.times.locationChanged,
                         local.vault.meta.recycleBinChanged ?? kept.group.times.created,
                         remote.vault.meta.recycleBinChanged ?? other.group.times.created)
        for (entry, parent) in entries.values where parent == drop { latest = max(latest, entry.times.locationChanged) }
        for (group, parent) in groups.values where parent == drop { latest = max(latest, group.times.locationChanged) }
        let foldTime = Timestamp(secondsSinceYearOne: latest.secondsSinceYearOne + 1)
        // Each object moved over is one second newer than its own move into the bin (newer than the
        // input still holding it in the dropped bin), not the fold's time: another device's later move
        // of it out of the bin must still win, in whichever order the three versions meet.
        func movedOver(_ time: Timestamp) -> Timestamp { Timestamp(secondsSinceYearOne: time.secondsSinceYearOne + 1) }
        for id in entries.keys where entries[id]?.parent == drop {
            entries[id]?.parent = keep
            if let moved = entries[id]?.entry.times.locationChanged { entries[id]?.entry.times.locationChanged = movedOver(moved) }
        }
        for id in groups.keys where groups[id]?.parent == drop {
            groups[id]?.parent = keep
            if let moved = groups[id]?.group.times.locationChanged { groups[id]?.group.times.locationChanged = movedOver(moved) }
        }
        groups[drop] = nil
        tombstones[drop] = foldTime
        meta.recycleBinUUID = keep
        meta.recycleBinChanged = foldTime
        changes.append(Change(.recycleBinMerged, .group, uuid: keep, path: "/" + VaultPath.escaped(groups[keep]?.group.name ?? "Recycle Bin"),
                              title: groups[keep]?.group.name ?? "Recycle Bin", detail: "two recycle bins folded into one"))
    }

    /// The group the merged `RecycleBinUUID` names travels with the setting: never deleted while the
    /// setting names it (MERGE.md rule 11). Kept as a change newer than the deletion it overrides, so
    /// that merging the result again with the deleting side keeps it.
    private func keepNamedRecycleBin() {
        guard let bin = meta.recycleBinUUID, groups[bin] == nil, var record = local.groups[bin] ?? remote.groups[bin] else { return }
        let deletedAt = [tombstones[bin], local.tombstones[bin], remote.tombstones[bin]].compactMap { $0 }.max()
        if let deletedAt, deletedAt >= record.group.times.lastModified {
            record.group.times.lastModified = Timestamp(secondsSinceYearOne: deletedAt.secondsSinceYearOne + 1)
        }
        groups[bin] = (record.group, record.parent)
        tombstones[bin] = nil
        // Relative to the local vault: a group it holds was not restored.
        guard local.groups[bin] == nil else { return }
        changes.append(Change(.restored, .group, uuid: bin, path: remote.path(ofGroup: bin),
                              title: record.group.name, detail: "kept: the recycle bin setting names it"))
    }

    /// A deleted group that still holds surviving entries or groups is kept (restored); a missing
    /// parent that neither side knows puts the object under the root.
    private func restoreParentsOfSurvivors() {
        var pending = entries.mapValues(\.parent) + groups.values.compactMap(\.parent)
        while let parent = pending.popLast() {
            guard groups[parent] == nil else { continue }
            guard var record = local.groups[parent] ?? remote.groups[parent] else { continue }
            // Restoring is a change newer than the deletion it overrides.
            if let deletedAt = tombstones[parent], deletedAt >= record.group.times.lastModified {
                record.group.times.lastModified = Timestamp(secondsSinceYearOne: deletedAt.secondsSinceYearOne + 1)
            }
            groups[parent] = (record.group, record.parent)
            tombstones[parent] = nil
            changes.append(Change(.restored, .group, uuid: parent, path: (local.groups[parent] != nil ? local : remote).path(ofGroup: parent),
                                  title: record.group.name, detail: "kept: it still holds newer entries or groups"))
            if let grandparent = record.parent { pending.append(grandparent) }
        }
        for id in entries.keys(where: { groups[$0.parent] == nil }) { entries[id]?.parent = local.rootUUID }
        for id in groups.keys where id != local.rootUUID {
            if let parent = groups[id]?.parent, groups[parent] == nil { groups[id]?.parent = local.rootUUID }
        }
    }

    /// A group never sits under its own descendant: when the two sides' moves form a cycle, the newer
    /// of the moves in it is undone (the group goes back to its place on the other side, else the root).
    private func removeCycles() {
        for id in groups.keys.sorted(by: UUID.precedes) {
            var path: [UUID] = [id]
            var current = groups[id]?.parent
            while let parent = current, !path.contains(parent) {
                path.append(parent)
                current = groups[parent]?.parent
            }
            guard let repeated = current, let start = path.firstIndex(of: repeated) else { continue }
            let cycle = Array(path[start...])
            let newest = cycle.max { lhs, rhs in
                let l = groups[lhs]!.group.times.locationChanged, r = groups[rhs]!.group.times.locationChanged
                return l != r ? l < r : UUID.precedes(lhs, rhs)
            }!
            let moved = groups[newest]!
            let alternatives = [local.groups[newest], remote.groups[newest]].compactMap { $0 }
                .filter { $0.parent != moved.parent }
            if let previous = alternatives.min(by: { $0.group.times.locationChanged < $1.group.times.locationChanged }) {
                groups[newest]?.parent = previous.parent
                groups[newest]?.group.times.locationChanged = previous.group.times.locationChanged
                groups[newest]?.group.previousParentGroup = previous.group.previousParentGroup
            } else {
                groups[newest]?.parent = local.rootUUID
            }
            warnings.append("group \(newest.canonicalString) was moved into its own subgroup by the other side's move; its newer move was undone")
        }
    }

    /// Group `id` with its merged children: those the base had in the base's order, then new ones by
    /// creation time (a fixed rule, so that both devices and later merges agree on the order).
    /// The merged tree below group `rootID`. Children keep the base's order where the base lists them,
    /// then come by creation time and UUID (the same on every device).
    private func buildTree(_ rootID: UUID) -> Group {
        // Each group's children, gathered in one pass (filtering all entries once per group was
        // quadratic: a quarter of a 10,000-entry merge).
        var childGroups: [UUID: [(id: UUID, created: Timestamp)]] = [:]
        for (id, record) in groups {
            guard let parent = record.parent, parent != id else { continue }
            childGroups[parent, default: []].append((id, record.group.times.created))
        }
        var childEntries: [UUID: [(id: UUID, created: Timestamp)]] = [:]
        for (id, parent, created) in entries.mapValues({ ($0.entry.uuid, $0.parent, $0.entry.times.created) }) {
            childEntries[parent, default: []].append((id, created))
        }
        func order(_ children: [(id: UUID, created: Timestamp)], _ listed: [UUID]) -> [UUID] {
            var rank: [UUID: Int] = [:]
            for (position, child) in listed.enumerated() where rank[child] == nil { rank[child] = position }
            return children.map { (rank: rank[$0.id] ?? Int.max, id: $0.id, created: $0.created) }
                .sorted { lhs, rhs in
                    if lhs.rank != rhs.rank { return lhs.rank < rhs.rank }
                    return lhs.created != rhs.created ? lhs.created < rhs.created : UUID.precedes(lhs.id, rhs.id)
                }
                .map(\.id)
        }
        func build(_ id: UUID) -> Group {
            var group = groups[id]?.group ?? local.vault.root
            let baseRecord = base?.groups[id]
            group.groups = order(childGroups[id] ?? [], baseRecord?.childGroups ?? []).map(build)
            let ordered = order(childEntries[id] ?? [], baseRecord?.childEntries ?? [])
            var children: [Entry] = []
            children.reserveCapacity(ordered.count)  // exactly: the merged vault keeps this array
            for child in ordered {
                if let entry = entries[child]?.entry { children.append(entry) }
            }
            group.entries = children
            return group
        }
        return build(rootID)
    }

    private func unionByName(_ first: [PreservedXML], _ second: [PreservedXML]) -> [PreservedXML] {
        first + second.filter { element in !first.contains { $0.name == element.name } }
    }
}

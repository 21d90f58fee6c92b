internal import MyPassCore

/// Compares and merges the two sides' versions of the entries both hold. Reads only the indexes it
/// was made with, so the merge runs it for all entries on all cores before applying the outcomes in
/// order (most of a merge's time goes here).
struct EntryPairer: Sendable {
    /// What was found for one entry.
    enum Pairing: Sendable {
        /// The same entry on both sides (most entries): only its place can differ.
        case same
        /// Different versions, merged against an ancestor found as `ancestor` says. Indirect: a
        /// merge holds one pairing per entry, nearly all `.same`, each then a word wide, not 170 bytes.
        indirect case merged(EntryMerger.Outcome, ancestor: FieldDecision.Ancestor)
    }

    let base: VaultIndex?
    /// The base is certainly common to both sides (`--base`, git's %O): its version is every entry's
    /// ancestor, also when a side's history no longer holds it (trimmed by a small history limit).
    var baseIsCertain = false
    let local: VaultIndex
    let remote: VaultIndex
    let explaining: SecretFingerprint?
    let historyMaxItems: Int
    let historyMaxSize: Int64
    let localPool: BinaryPool
    let remotePool: BinaryPool

    /// The two versions, merged against the most recent version both sides share (the base's, or a
    /// newer one both hold: a side that already contains the other's current version supersedes
    /// it). The base's version counts only where it lies on both sides' line of history.
    func pairing(_ mine: Entry, _ theirs: Entry) -> Pairing {
        if mine == theirs { return .same }
        let baseVersion = base?.entries[mine.uuid].flatMap { (known: VaultIndex.EntryRecord) -> Entry? in
            baseIsCertain || Self.isOnLine(known.entry, of: mine) && Self.isOnLine(known.entry, of: theirs) ? known.entry : nil
        }
        let ancestor = [baseVersion, Self.inferredAncestor(mine, theirs)].compactMap { $0 }.max { EntryMerger.isSuperseded($0, by: $1) }
        var merger = EntryMerger(ancestor: ancestor, historyAncestor: baseVersion, local: mine, remote: theirs)
        let source: FieldDecision.Ancestor = ancestor == nil ? .none : ancestor == baseVersion ? .base : .inferredFromHistory
        merger.explaining = explaining.map { (source, $0) }
        let outcome = merger.merge(historyMaxItems: historyMaxItems, historyMaxSize: historyMaxSize) { id in
            (localPool[id] ?? remotePool[id])?.data.count ?? 0
        }
        return .merged(outcome, ancestor: source)
    }

    /// Whether `baseVersion` and `side` lie on one line of history: the same version, one found in the
    /// other's history, or no history on `side` to tell (history turned off). A side that branched
    /// off before the base (its history holds neither the base's version nor the reverse) did not
    /// see the base's changes, so the base is not its ancestor: a conflict copy merged against the
    /// version a watcher took in since, say. Its ancestor is then inferred from shared history.
    static func isOnLine(_ baseVersion: Entry, of side: Entry) -> Bool {
        side.history.isEmpty || side.isSameOrLater(than: baseVersion) || baseVersion.isSameOrLater(than: side)
            || side.isTouched(from: baseVersion)
    }

    /// The entry's ancestor when the base does not know it (MERGE.md rule 2): the newest version both
    /// sides hold, or the version in one side's history that the other side's current version only
    /// touched (moved or recycled without changing a property: that side edited nothing since).
    static func inferredAncestor(_ mine: Entry, _ theirs: Entry) -> Entry? {
        let touched = [touchedVersion(mine, in: theirs), touchedVersion(theirs, in: mine)]
        return ([sharedVersion(mine, theirs)] + touched).compactMap { $0 }.max { $0.times.lastModified < $1.times.lastModified }
    }

    /// The newest version in `other`'s history that `current` is a touched copy of.
    static func touchedVersion(_ current: Entry, in other: Entry) -> Entry? {
        other.history.last { current.isTouched(from: $0) }
    }

    /// The newest version both sides hold (current or in history) with the same time and content.
    static func sharedVersion(_ mine: Entry, _ theirs: Entry) -> Entry? {
        let theirVersions = Set(([theirs.withoutHistory] + theirs.history).map(VersionKey.init))
        // Histories are oldest first: of two shared versions from the same second, the later one in
        // this side's sequence is the newer.
        let sequence = mine.history + [mine.withoutHistory]
        return sequence.indices
            .filter { theirVersions.contains(VersionKey(sequence[$0])) }
            .max { (sequence[$0].times.lastModified, $0) < (sequence[$1].times.lastModified, $1) }
            .map { sequence[$0] }
    }
}

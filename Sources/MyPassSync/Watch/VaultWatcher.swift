internal import Foundation
public import KDBXFormat
internal import MyPassCore
internal import MyPassMerge

/// Keeps one vault in step with its file: notices external changes (by fingerprint), takes them in
/// as the new base, folds sync-conflict copies in, recognises its own writes, waits for a vault that
/// disappeared, retries a file that does not parse yet, and reports a rollback or a different
/// database instead of taking it.
public final class VaultWatcher: @unchecked Sendable {
    /// What to do when the file changed on disk.
    public enum Policy: String, Sendable, CaseIterable { case merge, reload, ask }
    /// What to do with sync-conflict copies.
    public enum CopyPolicy: String, Sendable, CaseIterable { case merge, report, ignore }

    /// The vault watched (resolved path).
    public let path: String
    private let key: CompositeKey
    private let state: SyncStateStore
    private let limits: ResourceLimits
    private let policy: Policy
    private let copyPolicy: CopyPolicy
    private let emit: @Sendable (WatchEvent) -> Void
    private var reportedCopies: Set<String> = []
    /// The last derived key: a reload of a file whose KDF settings and salt are unchanged (what this
    /// project writes) costs no KDF run; a new salt (KeePassXC draws one per save) costs one.
    private var cachedKey: DerivedKey?
    /// The file's content as last parsed (the version recorded as base), so that a check after a
    /// change elsewhere (a conflict copy) does not parse the vault and its base again.
    private var known: (fingerprint: Fingerprint, opened: OpenedVault)?
    /// The version this watcher last wrote, until its own inotify event has been seen.
    private var ownWrite: Fingerprint?
    private var missingReported = false
    /// How long a version that looks like a rollback is held before it is refused, waiting for the
    /// conflict copy with this device's newer version (0: refused at once, as `--once` does).
    private let rollbackHold: Double
    private var rollbackSeen: (fingerprint: Fingerprint, since: Date)?
    private var waitingForCopy = false
    /// Whether the watcher's saves draw a new KDF salt (`SyncSession.rotatesKDFSalt`).
    public var rotatesKDFSalt = true
    /// A sync engine's transfer into the folder was reported and is still awaited.
    public private(set) var waitingForTransfer = false
    /// How long a conflict copy this device did not make is left for the device that made it (see
    /// `init`); 0: merged at once.
    private let foreignCopyGrace: Double
    /// Inodes the vault file had when this watcher read it, newest last: a copy with one of them is
    /// this device's own version, renamed aside by the sync engine on this device.
    private var vaultInodes: [UInt64] = []
    /// Copies that could not be merged, with their (inode, size, mtime) then: not opened again (no
    /// KDF run on every check for a planted file) until they change.
    private var failedCopies: [String: [Int]] = [:]

    private static func stamp(_ path: String) -> [Int] {
        guard let status = SystemCalls.status(atPath: path) else { return [] }
        return [Int(status.inode), Int(status.size)] + status.modified
    }

    /// When each foreign copy was first seen.
    private var foreignCopiesSeen: [CopyIdentity: Date] = [:]
    /// A copy by path, inode and modification time: a file system reuses a deleted copy's inode for
    /// the next file at once, and a new copy under the same name must start its own grace.
    private struct CopyIdentity: Hashable {
        let path: String
        let inode: UInt64
        let modified: [Int]
    }

    /// `foreignCopyGrace`: a sync engine makes a conflict copy on one device (by renaming that
    /// device's version aside) and ships it to the others. If every device merged it at once, each
    /// would write the same merge as a new version at the same moment, and the engine would make one
    /// more copy of those. So a copy that arrived from elsewhere is left for this long to the device
    /// that made it: usually that device's merged vault arrives and the copy's deletion follows, and
    /// nothing is left to do here. After the grace (that device may run no watcher) it is merged here.
    public init(
        path: String, key: CompositeKey, state: SyncStateStore, limits: ResourceLimits, policy: Policy, copyPolicy: CopyPolicy,
        foreignCopyGrace: Double = 0, rollbackHold: Double = 0, emit: @escaping @Sendable (WatchEvent) -> Void
    ) {
        self.foreignCopyGrace = foreignCopyGrace
        self.rollbackHold = rollbackHold
        self.path = path
        self.key = key
        self.state = state
        self.limits = limits
        self.policy = policy
        self.copyPolicy = copyPolicy
        self.emit = emit
    }

    /// Copies opened during the debounce (`prepare(copyAt:)`), for the next check.
    let prefetch = CopyPrefetch()
    /// How a copy is opened now (the vault's KDF, key and size), set by each check for `prepare`,
    /// which runs on the event thread.
    private let openingLock = NSLock()
    private var copyOpening: CopyPrefetch.Parameters?

    /// A conflict copy appeared at `copyPath`: start opening it now, so that the check after the
    /// debounce finds it open (only with the merge policy, and only once the vault is known).
    public func prepare(copyAt copyPath: String) {
        guard copyPolicy == .merge, let opening = openingLock.withLock({ copyOpening }) else { return }
        prefetch.start(copyPath, with: opening)
    }

    /// Keeps how copies of the vault file read now (`bytes`) are opened, for `prepare`.
    private func rememberCopyOpening(for bytes: Data) {
        guard let header = try? KDBXReader.header(of: bytes) else { return }
        let opening = ConflictFolding.copyOpening(forVaultAt: path, vaultKDF: header.kdf, key: key,
                                                  cachedKey: known?.opened.derivedKey ?? cachedKey, limits: limits)
        openingLock.withLock { copyOpening = opening }
    }

    /// Whether the last `check` failed (an error or an unreadable file, not a wait): the caller backs
    /// off before the next one.
    public private(set) var failedLastCheck = false
    /// The problem last reported: the same one again is not reported again until something else
    /// happened (a step that keeps failing reports once).
    private var lastProblem: (kind: WatchEvent.Kind, detail: String)?

    private func report(_ event: WatchEvent) {
        if event.kind.isProblem {
            failedLastCheck = true
            if let last = lastProblem, last.kind == event.kind && last.detail == event.detail { return }
            lastProblem = (event.kind, event.detail)
        } else if event.kind != .waitingForSync {
            lastProblem = nil
        }
        emit(event)
    }

    /// One pass: the vault itself, then its conflict copies. Returns false when the vault could not
    /// be read yet (half written or missing) and the pass should be retried later.
    @discardableResult
    public func check() -> Bool {
        failedLastCheck = false
        // The sync engine is still writing the vault or a copy: what is there now is about to change.
        let transfers = SyncTransfers.inProgress(for: path)
        if !transfers.isEmpty {
            if !waitingForTransfer { report(.waitingForSync(vault: path, transfers: transfers)) }
            waitingForTransfer = true
            return false
        }
        waitingForTransfer = false
        let current: (bytes: Data, fingerprint: Fingerprint)
        do {
            current = try DurableFile.read(atPath: path)
        } catch .notFound {
            if !missingReported { report(.vaultMissing(vault: path)) }
            missingReported = true
            return false
        } catch {
            report(.error(vault: path, message: "\(error)"))
            return false
        }
        if missingReported { report(.vaultBack(vault: path)) }
        missingReported = false
        rememberCopyOpening(for: current.bytes)
        if vaultInodes.last != current.fingerprint.inode {
            vaultInodes.append(current.fingerprint.inode)
            if vaultInodes.count > 32 { vaultInodes.removeFirst() }
        }
        let record = state.base(for: path)
        if let record, record.record.fingerprint.sameContent(as: current.fingerprint) {
            if let ownWrite, ownWrite.sameContent(as: current.fingerprint) {
                report(.ownWriteIgnored(vault: path))
                self.ownWrite = nil
            }
            return checkCopies(current)
        }
        let disk: OpenedVault
        do {
            disk = try KDBXReader.open(current.bytes, key: key, cachedKey: cachedKey, limits: limits)
            cachedKey = disk.derivedKey
        } catch KDBXError.wrongCredentials {
            report(.keyChanged(vault: path))
            return true
        } catch {
            report(.unreadable(vault: path, reason: "\(error)"))
            return false
        }
        let base = record.flatMap { record in
            known.flatMap { $0.fingerprint.sameContent(as: record.record.fingerprint) ? $0.opened.vault : nil }
                ?? state.baseVault(for: path, read: record, key: key, cachedKey: cachedKey, limits: limits)
        }
        // Entries older than the base are a rollback unless a conflict copy beside the file holds the
        // newer versions (the sync engine moved this device's version aside): folding it in keeps them.
        // Only a copy that opens, is this database and really holds them counts: any file with a
        // copy's name could be planted next to a rolled-back vault.
        if let base, let problem = Self.replacementProblem(base: base, disk: disk.vault),
           !(copyPolicy == .merge && base.root.uuid == disk.vault.root.uuid && copyHoldsNewerVersions(than: disk.vault, base: base)) {
            // The engine may have put the other device's version in place before the copy of this
            // device's own version arrives from there: wait for it a while before refusing.
            let firstSeen = rollbackSeen?.fingerprint.sameContent(as: current.fingerprint) == true ? rollbackSeen!.since : Date()
            rollbackSeen = (current.fingerprint, firstSeen)
            if Date().timeIntervalSince(firstSeen) < rollbackHold {
                if !waitingForCopy {
                    report(.waitingForCopy(vault: path, problem: problem, hold: rollbackHold))
                }
                waitingForCopy = true
                return false
            }
            waitingForCopy = false
            report(.refused(vault: path, reason: problem))
            return true
        }
        rollbackSeen = nil
        waitingForCopy = false
        if record != nil {
            switch policy {
            case .ask:
                report(.decisionNeeded(vault: path))
                return true
            case .merge, .reload:
                let changes = base.map { VaultDiff.diff(from: $0, to: disk.vault) } ?? []
                report(.reloaded(vault: path, changes: changes))
            }
        } else {
            report(.baseRecorded(vault: path))
        }
        do { try state.record(current.bytes, fingerprint: current.fingerprint, for: path) } catch { report(.error(vault: path, message: "\(error)")) }
        known = (current.fingerprint, disk)
        // No copy holds this device's version: what it synced must still be there.
        if policy == .merge, let base, ConflictCopies.find(for: path).isEmpty {
            return restoreLostContent(base: base, disk: disk, fingerprint: current.fingerprint)
        }
        return checkCopies(current)
    }

    /// A new version that lacks content of the one this device synced, with no deletion recorded and
    /// no conflict copy holding it, was saved by a program over a version it had not read (KeePassXC
    /// saves without checking the file; a sync engine replaced the file while it had it open). The
    /// three-way merge of the synced version and the new one puts the lost content back ("absence is
    /// not deletion"); a new version that descends from the synced one merges to itself and nothing
    /// is written.
    private func restoreLostContent(base: Vault, disk: OpenedVault, fingerprint: Fingerprint) -> Bool {
        do {
            // The new version is the local side: ties (the same version written in another order of
            // fields, say) keep its form, so a descendant merges to exactly itself.
            let (restored, step) = try MergeJob.merge(base, from: "the synced version", into: disk.vault, base: .given(base))
            guard restored != disk.vault else { return true }
            let session = try SyncSession(path: path, working: disk, key: key, state: state, limits: limits, basedOn: fingerprint,
                                          workingIsOnDisk: true)
            session.rotatesKDFSalt = rotatesKDFSalt
            session.update(restored)
            let before = try? FileReading.readAll(atPath: path)
            let save = try session.saveMerging()
            if save.wroteFile {
                ownWrite = session.fingerprint
                if let before {
                    session.journalMerge(.restore, before: before, inputs: [.init(name: "the synced version", bytes: nil)],
                                         changes: step.changes.count, decisions: step.decisions)
                }
            }
            known = (session.fingerprint, session.opened)
            report(.restored(vault: path, changes: VaultDiff.diff(from: disk.vault, to: session.vault)))
        } catch {
            report(.error(vault: path, message: "restoring lost content: \(error)"))
            return false
        }
        return true
    }

    /// Conflict copies: merged (and moved aside), reported once, or ignored.
    private func checkCopies(_ current: (bytes: Data, fingerprint: Fingerprint)) -> Bool {
        let copies = ConflictCopies.find(for: path)
        if copies.isEmpty { foreignCopiesSeen = [:] }
        guard !copies.isEmpty, copyPolicy != .ignore else { return true }
        if copyPolicy == .report {
            for copy in copies where !reportedCopies.contains(copy.path) {
                reportedCopies.insert(copy.path)
                report(.conflictCopyFound(vault: path, copy: copy.path))
            }
            return true
        }
        // Copies that failed and have not changed since are not opened again.
        let present = Set(copies.map(\.path))
        prefetch.keepOnly(present)
        failedCopies = failedCopies.filter { present.contains($0.key) }
        let candidates = copies.filter { copy in failedCopies[copy.path].map { $0 != Self.stamp(copy.path) } ?? true }
        // Copies that arrived from another device wait for that device to merge them (see init).
        var deferred = false
        let now = Date()
        let ready = candidates.filter { copy in
            guard foreignCopyGrace > 0 else { return true }
            guard let status = SystemCalls.status(atPath: copy.path) else { return true }
            if vaultInodes.contains(status.inode) { return true }
            let identity = CopyIdentity(path: copy.path, inode: status.inode, modified: status.modified)
            let seen = foreignCopiesSeen[identity, default: now]
            foreignCopiesSeen[identity] = seen
            if now.timeIntervalSince(seen) >= foreignCopyGrace { return true }
            deferred = true
            return false
        }
        foreignCopiesSeen = foreignCopiesSeen.filter { present.contains($0.key.path) }
        guard !ready.isEmpty else { return !deferred }
        do {
            // The file is the version recorded as base (check() made sure): its parse serves as both.
            let opened: OpenedVault
            if let known, known.fingerprint.sameContent(as: current.fingerprint) {
                opened = known.opened
            } else {
                opened = try KDBXReader.open(current.bytes, key: key, cachedKey: cachedKey, limits: limits)
            }
            let session = try SyncSession(path: path, working: opened, key: key, state: state, limits: limits, basedOn: current.fingerprint,
                                          workingIsOnDisk: true)
            session.rotatesKDFSalt = rotatesKDFSalt
            let folded = try ConflictFolding.fold(ready, into: session, base: opened.vault, key: key, cachedKey: opened.derivedKey,
                                                  limits: limits, dryRun: false, sizeLimit: nil, prefetched: prefetch)
            if folded.wroteVault { ownWrite = session.fingerprint }
            let previous = known
            known = (session.fingerprint, session.opened)
            DeferredRelease.drop(previous)
            var retryLater = false
            for outcome in folded.outcomes {
                switch outcome.result {
                case .merged:
                    report(.conflictCopyMerged(vault: path, copy: outcome.copy, keptAs: outcome.movedTo ?? "", changes: outcome.changes,
                                               explanation: outcome.explanation))
                case .nothingNew:
                    report(.conflictCopyRetired(vault: path, copy: outcome.copy, keptAs: outcome.movedTo ?? ""))
                case .changedMeanwhile, .wouldMerge:
                    retryLater = true
                case .otherCredentials, .otherDatabase, .unreadable, .tooLarge, .tooCostly:
                    failedCopies[outcome.copy] = Self.stamp(outcome.copy)
                    if !reportedCopies.contains(outcome.copy) {
                        reportedCopies.insert(outcome.copy)
                        report(.conflictCopyLeft(vault: path, copy: outcome.copy, reason: outcome.result))
                    }
                }
            }
            if retryLater || deferred { return false }
        } catch {
            report(.error(vault: path, message: "folding conflict copies: \(error)"))
            return false
        }
        return true
    }

    /// Whether a conflict copy beside the vault opens, is this database, and holds every entry at least
    /// as new as `base` has it where `disk` has it older.
    private func copyHoldsNewerVersions(than disk: Vault, base: Vault) -> Bool {
        let baseTimes = Dictionary(base.root.allEntries().map { ($0.entry.uuid, $0.entry.times.lastModified) }, uniquingKeysWith: { max($0, $1) })
        let older = disk.root.allEntries().compactMap { item -> UUID? in
            guard let time = baseTimes[item.entry.uuid], item.entry.times.lastModified < time else { return nil }
            return item.entry.uuid
        }
        let limit = ConflictFolding.copySizeLimit(forVaultOf: SystemCalls.status(atPath: path).map { Int($0.size) } ?? 0)
        for copy in ConflictCopies.find(for: path) {
            guard let bytes = try? FileReading.readAll(atPath: copy.path, followSymlinks: false, limit: limit),
                  let opened = try? KDBXReader.open(bytes, key: key, cachedKey: cachedKey, limits: limits),
                  opened.vault.root.uuid == base.root.uuid else { continue }
            let copyTimes = Dictionary(opened.vault.root.allEntries().map { ($0.entry.uuid, $0.entry.times.lastModified) },
                                       uniquingKeysWith: { max($0, $1) })
            if older.allSatisfy({ uuid in copyTimes[uuid].map { $0 >= baseTimes[uuid]! } ?? false }) { return true }
        }
        return false
    }

    /// Why `disk` must not be taken as the vault's next version: another database (root differs), or a
    /// rollback (nothing newer than the base, and entries the base holds newer versions of).
    static func replacementProblem(base: Vault, disk: Vault) -> String? {
        guard base.root.uuid == disk.root.uuid else {
            return "the file is now a different database (its root group differs); not taken"
        }
        let baseEntries = Dictionary(base.root.allEntries().map { ($0.entry.uuid, $0.entry.times.lastModified) }, uniquingKeysWith: { max($0, $1) })
        var older = 0, newer = 0
        for (entry, _) in disk.root.allEntries() {
            guard let baseTime = baseEntries[entry.uuid] else { newer += 1; continue }
            if entry.times.lastModified < baseTime { older += 1 } else if entry.times.lastModified > baseTime { newer += 1 }
        }
        if older > 0 && newer == 0 {
            return "the file was replaced by an older version (\(older) entr\(older == 1 ? "y is" : "ies are") older than this device's last sync); not taken"
        }
        return nil
    }
}

public import Foundation
public import SyncFiles
internal import SyncState
public import SyncCommit
public import MyPassCore
internal import MyPassMerge

/// Every decision the watcher makes about a vault, as a pure function: from one listing of the
/// folder (`FolderSnapshot`), the versions at hand (the one this device last synced, the one on disk,
/// the pending ones), what was remembered from earlier checks, the time and the device's policy, to a
/// typed `Plan`. No I/O: the watcher reads before and acts after; tests run it with vaults in memory
/// and a clock they set.
public enum Reconciler {
    /// How the device handles changes and copies.
    public struct Policy: Sendable {
        /// On an external change: take it in (restoring what it lacks), take it as it is, or ask.
        public var vault: VaultWatcher.Policy
        /// Conflict copies: fold in, report, ignore.
        public var copies: VaultWatcher.CopyPolicy
        /// How long a copy made on another device is left to that device (0: merged at once).
        public var foreignCopyGrace: TimeInterval
        /// How long a version that looks like a rollback is held for the copy with the newer versions.
        public var rollbackHold: TimeInterval
        /// When a sync engine renamed both versions aside on another device (rclone bisync) and only
        /// copies arrived here: how long that device is left to rebuild the vault before this one does.
        public var rebuildGrace: TimeInterval
        /// A policy with these rules.
        public init(vault: VaultWatcher.Policy = .merge, copies: VaultWatcher.CopyPolicy = .merge, foreignCopyGrace: TimeInterval = 0,
                    rollbackHold: TimeInterval = 0, rebuildGrace: TimeInterval = 3600) {
            self.vault = vault
            self.copies = copies
            self.foreignCopyGrace = foreignCopyGrace
            self.rollbackHold = rollbackHold
            self.rebuildGrace = rebuildGrace
        }

        /// Whether every copy is kept aside on this device as it arrives (before a sync engine can
        /// replace it with a same-named copy from elsewhere): with no grace every copy is merged at
        /// once, so each is kept; with a grace only this device's own versions are.
        public var makesEveryCopyPendingOnArrival: Bool { foreignCopyGrace == 0 }
    }

    /// A version of the vault at hand, opened.
    public struct Version: Sendable {
        /// The SHA-256 (hex) of its bytes.
        public let sha256: String
        /// Its content.
        public let vault: Vault

        /// The version whose bytes hash to `sha256`, holding `vault`.
        public init(sha256: String, vault: Vault) {
            self.sha256 = sha256
            self.vault = vault
        }
    }

    /// The versions a check has opened.
    public struct Versions: Sendable {
        /// The version this device last synced (nil: none yet, or it no longer opens).
        public var base: Version?
        /// The version on disk when it is not the base's content (nil: the file is the base).
        public var disk: Version?
        /// Versions this device wrote or took in that the vault may not hold (`PendingVersions`).
        public var pending: [Version]
        /// Pending versions (by SHA-256) that no longer open with this key or are gone.
        public var unopenable: [String]

        /// These versions.
        public init(base: Version?, disk: Version?, pending: [Version] = [], unopenable: [String] = []) {
            self.base = base
            self.disk = disk
            self.pending = pending
            self.unopenable = unopenable
        }
    }

    /// Whether `event` is told: a problem the same as the last one told is not told again until
    /// something else happened (a step that keeps failing reports once; a wait for a transfer does
    /// not count as something else).
    public static func tells(_ event: WatchEvent, memory: inout Memory) -> Bool {
        if event.kind.isProblem {
            if let last = memory.lastProblem, last.kind == event.kind && last.detail == event.detail { return false }
            memory.lastProblem = (event.kind, event.detail)
        } else if event.kind != .waitingForSync {
            memory.lastProblem = nil
        }
        return true
    }

    /// The watcher wrote the vault as `written`: when the next check finds it there, that is its own write.
    public static func wrote(_ written: Fingerprint, in memory: inout Memory) {
        memory.ownWrite = written
    }

    /// A copy refused while gathering evidence or rebuilding: remembered as failed (not opened again
    /// while unchanged); returns whether to tell it (once per copy).
    public static func refused(_ copy: CopyFile, for reason: ForeignVersion.Refusal, in memory: inout Memory) -> Bool {
        memory.copyFailed(copy, reason: reason)
        return memory.firstReport(of: copy.path)
    }

    /// Which copies that open are kept as pending versions the moment they arrive, by inode: each is
    /// a version this device saw (often its own, renamed aside by the sync engine, perhaps another
    /// program's save the watcher never read), kept before the engine can overwrite it with a
    /// same-named copy from elsewhere. With no grace for other devices' copies every one is kept
    /// (each is merged at once); with one, only this device's own (an inode the vault's file has
    /// or had, `vaultInode` now).
    public static func keepsPendingOnArrival(policy: Policy, memory: Memory, vaultInode: UInt64) -> @Sendable (UInt64) -> Bool {
        guard !policy.makesEveryCopyPendingOnArrival else { return { _ in true } }
        let own = Set(memory.vaultFiles.map(\.inode) + [vaultInode])
        return { own.contains($0) }
    }

    /// Why a version is not taken.
    public enum Refusal: Sendable, Equatable, CustomStringConvertible {
        /// The file is now another database (its root group differs).
        case otherDatabase
        /// The file was replaced by an older version: `olderEntries` are older than this device's last sync.
        case rollback(olderEntries: Int)

        public var description: String {
            switch self {
            case .otherDatabase: "the file is now a different database (its root group differs); not taken"
            case .rollback(let older):
                "the file was replaced by an older version (\(older) entr\(older == 1 ? "y is" : "ies are") older than this device's last sync); not taken"
            }
        }
    }

    /// Why the check must be done again later.
    public enum Wait: Sendable, Equatable {
        /// A sync engine is transferring the vault or a copy into the folder.
        case transfers([String])
        /// The vault file is not there.
        case vaultMissing
        /// The vault is not there and its copies are versions a sync engine renamed aside on another
        /// device (rclone bisync): that device rebuilds the vault; here only after `until`.
        case rebuildElsewhere(copies: [String], until: Date)
        /// A version that looks like a rollback is held until `until` for the copy with the newer versions.
        case rollbackHold(Refusal, until: Date)
    }

    /// What to do in one check.
    public struct Reconciliation: Sendable {
        /// The disk version is new: take it in as the base. `changes`: what it changed since the base
        /// (nil: there was no base, this is the first sync).
        public var takeIn: TakeIn?
        /// Pending versions (by SHA-256) holding content the vault lacks, with no deletion recorded:
        /// merge them in.
        public var restoreFrom: [String] = []
        /// Pending versions the vault holds: forget them.
        public var retire: [String] = []
        /// This device's versions (by SHA-256: the base, pending ones) that the version a person chose
        /// to take as it is lacks, or that belong to another database than the vault's now: kept on
        /// this device (`RetiredCopies`) and forgotten as pending, never restored.
        public var setAside: [String] = []
        /// A refused version a person chose to merge with this device's: `takeIn` is recorded only by
        /// the commit that restores this device's versions into it; if that commit fails, the base stays
        /// this device's version and the refusal stands (nothing is lost, the person decides again).
        public var takeInOnlyByRestore = false
        /// Conflict copies to fold in now.
        public var fold: [CopyFile] = []
        /// Conflict copies to report (copy policy `report`), each once.
        public var report: [CopyFile] = []
        /// Copies left because they failed before and have not changed since (not opened again).
        public var leftAsFailed: [CopyFile] = []
        /// Copies from another device are in their grace: check again at this time.
        public var retryAt: Date?
        /// The file is the version this watcher wrote last: its own write seen (told once).
        public var ownWriteSeen = false
        /// Whether the base a taken-in version replaces is held by the vault (recorded as contained)
        /// or must stay pending (it is being restored).
        public var replacedBaseIsHeld = true

        /// Whether the plan writes nothing and takes nothing in.
        public var isEmpty: Bool {
            takeIn == nil && restoreFrom.isEmpty && retire.isEmpty && setAside.isEmpty && fold.isEmpty && report.isEmpty
        }
    }

    /// A new disk version taken in.
    public enum TakeIn: Sendable {
        /// The first version this device syncs.
        case first
        /// A version made elsewhere, with what it changed since the base.
        case changed([Change])
    }

    /// The decision of one check.
    public enum Plan: Sendable {
        /// Nothing can be decided now: check again (at `Wait`'s time, or on the next event).
        case wait(Wait)
        /// The file could not be read.
        case fail(String)
        /// The disk version is not taken (reported; the file is left alone).
        case refuse(Refusal)
        /// The disk version changed and the policy is to ask.
        case ask
        /// Take in, restore, fold, retire, report (any of them; none: nothing to do).
        case reconcile(Reconciliation)
        /// A person decided to overwrite the version on disk with this device's, `with` (the base):
        /// written through the session's compare-and-swap over exactly that version, the disk's kept
        /// as a backup.
        case overwrite(with: Version)
        /// A person decided to overwrite the version on disk, and this device has no version of its
        /// own (no base, or it no longer opens with this key): nothing is done.
        case noOwnVersion
        /// The vault is not there: a sync engine renamed both versions aside (rclone bisync). Put
        /// `from` (this device's own version, or after the rebuild grace any of the copies) back as
        /// the vault where none is, then fold the other copies into it.
        case rebuild(from: CopyFile)
    }

    /// Whether the plan for `versions` needs the rollback evidence: the disk version looks like a
    /// rollback of the same database and copies are merged. The watcher then reads the copies beside
    /// the vault (its I/O, before planning) and passes what it found as `copyHoldsNewer`.
    public static func needsRollbackEvidence(_ versions: Versions, policy: Policy) -> Bool {
        guard policy.copies == .merge, let base = versions.base, let disk = versions.disk else { return false }
        return base.vault.root.uuid == disk.vault.root.uuid && replacementProblem(base: base.vault, disk: disk.vault) != nil
    }

    /// The plan for one check (no I/O). `copyHoldsNewer`: the rollback evidence, whether a conflict
    /// copy beside the vault holds the versions a rollback lacks (gathered only when
    /// `needsRollbackEvidence`). `decision`: a person's decision on the version on disk, for this
    /// check only (it may take a refused version, or overwrite it: `Plan.overwrite`).
    public static func plan(
        _ snapshot: FolderSnapshot, versions: Versions, memory: inout Memory, now: Date, policy: Policy,
        copyHoldsNewer: Bool = false, decision: Decision? = nil
    ) -> Plan {
        guard snapshot.transfers.isEmpty else { return .wait(.transfers(snapshot.transfers)) }
        let fingerprint: Fingerprint
        switch snapshot.vault {
        case .missing: return planRebuild(snapshot.copies, memory: &memory, now: now, policy: policy)
        case .failed(let message): return .fail(message)
        case .present(let present): fingerprint = present
        }
        if let identity = snapshot.vaultIdentity { memory.noteVaultFile(identity) }
        // A person's decision is about one version: any other on disk now (a save swapped in since
        // the question) is asked about again, never acted on under a decision nobody made about it.
        if let decision, !decision.isAbout(fingerprint.sha256) { return .ask }
        if decision?.choice == .overwrite {
            guard let base = versions.base else { return .noOwnVersion }
            if versions.disk != nil {
                memory.rollbackSeen = nil
                return .overwrite(with: base)
            }
        }
        let vaultPolicy = decision?.vaultPolicy ?? policy.vault
        var plan = Reconciliation()
        var takenAsItIs = false
        if let disk = versions.disk {
            if let base = versions.base, let problem = replacementProblem(base: base.vault, disk: disk.vault),
               !(policy.copies == .merge && base.vault.root.uuid == disk.vault.root.uuid && copyHoldsNewer) {
                guard let decision, decision.takes(disk, refusedFor: problem) else {
                    let since = memory.rollbackSeen?.sha256 == disk.sha256 ? memory.rollbackSeen!.since : now
                    memory.rollbackSeen = (disk.sha256, since)
                    if decision == nil, now.timeIntervalSince(since) < policy.rollbackHold {
                        return .wait(.rollbackHold(problem, until: since.addingTimeInterval(policy.rollbackHold)))
                    }
                    return .refuse(problem)
                }
                takenAsItIs = vaultPolicy == .reload
                plan.takeInOnlyByRestore = vaultPolicy == .merge
            }
            memory.rollbackSeen = nil
            if versions.base != nil && vaultPolicy == .ask { return .ask }
            plan.takeIn = versions.base.map { .changed(VaultDiff.diff(from: $0.vault, to: disk.vault)) } ?? .first
        } else {
            memory.rollbackSeen = nil
            if let own = memory.ownWrite, own.sameContent(as: fingerprint) {
                plan.ownWriteSeen = true
                memory.ownWrite = nil
            }
        }
        // What this device wrote or took in must be in the vault: each pending version (and the base
        // a new disk version replaces) is retired when contained, else merged in.
        if let current = versions.disk ?? versions.base {
            var candidates = versions.pending
            if versions.disk != nil, let base = versions.base, !candidates.contains(where: { $0.sha256 == base.sha256 }) {
                candidates.append(base)
            }
            for version in candidates where version.sha256 != current.sha256 {
                // A version of another database is never merged into this one, nor "contained" in it.
                if version.vault.root.uuid != current.vault.root.uuid {
                    plan.setAside.append(version.sha256)
                    memory.notContained[version.sha256] = nil
                    continue
                }
                if takenAsItIs {
                    if contains(current.vault, version.vault) {
                        plan.retire.append(version.sha256)
                    } else {
                        plan.setAside.append(version.sha256)
                    }
                    memory.notContained[version.sha256] = nil
                    continue
                }
                if memory.notContained[version.sha256] == current.sha256 {
                    if vaultPolicy == .merge { plan.restoreFrom.append(version.sha256) }
                    continue
                }
                if contains(current.vault, version.vault) {
                    plan.retire.append(version.sha256)
                    memory.notContained[version.sha256] = nil
                } else {
                    memory.notContained[version.sha256] = current.sha256
                    if vaultPolicy == .merge { plan.restoreFrom.append(version.sha256) }
                }
            }
            plan.retire += versions.pending.filter { $0.sha256 == current.sha256 }.map(\.sha256)
        }
        // A pending version that no longer opens with this key (the key changed since) or is gone can
        // never be merged here: retired.
        plan.retire += versions.unopenable
        plan.replacedBaseIsHeld = versions.base.map { !plan.restoreFrom.contains($0.sha256) } ?? true
        planCopies(snapshot.copies, into: &plan, memory: &memory, now: now, policy: policy)
        return .reconcile(plan)
    }

    /// The vault is missing: rebuilt from the copies a sync engine renamed aside when one of them is
    /// this device's own version (the device where the engine ran rebuilds; the others only received
    /// copies and wait for that vault, so two devices never both write a rebuilt vault), or when the
    /// copies have waited out the rebuild grace here (that device may run no watcher). Otherwise: wait.
    /// A copy that failed to rebuild from (unchanged since) is not chosen again.
    private static func planRebuild(_ copies: [CopyFile], memory: inout Memory, now: Date, policy: Policy) -> Plan {
        let present = Set(copies.map(\.path))
        memory.failedCopies = memory.failedCopies.filter { present.contains($0.key) }
        let renamedAside = copies.filter(\.engine.renamesBothVersions).sorted { $0.path < $1.path }
        let usable = renamedAside.filter { memory.failedCopies[$0.path] != $0 }
        guard policy.copies == .merge, !usable.isEmpty else { return .wait(.vaultMissing) }
        if let own = usable.first(where: memory.isOwnVersion) { return .rebuild(from: own) }
        // When the last of them arrived (as the file system says; else since this watcher first saw it).
        var arrived: Date = .distantPast
        for copy in renamedAside {
            let seen = memory.foreignCopiesSeen[copy, default: now]
            memory.foreignCopiesSeen[copy] = seen
            arrived = max(arrived, min(copy.arrived ?? seen, seen))
        }
        let due = arrived.addingTimeInterval(policy.rebuildGrace)
        return now >= due ? .rebuild(from: usable[0]) : .wait(.rebuildElsewhere(copies: renamedAside.map(\.path), until: due))
    }

    /// The copies part of a plan: ready ones folded, failed ones left until they change, foreign ones
    /// in their grace, reported ones reported once.
    private static func planCopies(_ copies: [CopyFile], into plan: inout Reconciliation, memory: inout Memory, now: Date, policy: Policy) {
        let present = Set(copies.map(\.path))
        memory.failedCopies = memory.failedCopies.filter { present.contains($0.key) }
        memory.failureReasons = memory.failureReasons.filter { memory.failedCopies[$0.key] != nil }
        memory.foreignCopiesSeen = memory.foreignCopiesSeen.filter { copies.contains($0.key) }
        switch policy.copies {
        case .ignore:
            return
        case .report:
            plan.report = copies.filter { memory.firstReport(of: $0.path) }
            return
        case .merge:
            break
        }
        plan.leftAsFailed = copies.filter { memory.failedCopies[$0.path] == $0 }
        for copy in copies where memory.failedCopies[copy.path] != copy {
            guard policy.foreignCopyGrace > 0, !memory.isOwnVersion(copy) else {
                plan.fold.append(copy)
                continue
            }
            let seen = memory.foreignCopiesSeen[copy, default: now]
            memory.foreignCopiesSeen[copy] = seen
            let due = seen.addingTimeInterval(policy.foreignCopyGrace)
            if now >= due {
                plan.fold.append(copy)
            } else {
                plan.retryAt = min(plan.retryAt ?? due, due)
            }
        }
    }

    /// Whether `vault` holds everything `version` holds: merging `version` in brings no content
    /// (against `version` itself when `vault` descends from it, else each entry's ancestor inferred).
    public static func contains(_ vault: Vault, _ version: Vault) -> Bool {
        guard vault.root.uuid == version.root.uuid else { return true }
        let base = VaultMerger.descends(vault, from: version) ? version : nil
        guard let merged = try? VaultMerger.merge(base: base, local: vault, remote: version) else { return false }
        return VaultDiff.sameContent(vault, merged.vault)
    }

    /// Why `disk` must not be taken as the vault's next version: another database (root differs), or a
    /// rollback (nothing newer than the base, and entries the base holds newer versions of).
    public static func replacementProblem(base: Vault, disk: Vault) -> Refusal? {
        guard base.root.uuid == disk.root.uuid else { return .otherDatabase }
        let baseEntries = Dictionary(base.root.allEntries().map { ($0.entry.uuid, $0.entry.times.lastModified) }, uniquingKeysWith: { max($0, $1) })
        var older = 0, newer = 0
        for (entry, _) in disk.root.allEntries() {
            guard let baseTime = baseEntries[entry.uuid] else { newer += 1; continue }
            if entry.times.lastModified < baseTime { older += 1 } else if entry.times.lastModified > baseTime { newer += 1 }
        }
        return older > 0 && newer == 0 ? .rollback(olderEntries: older) : nil
    }
}

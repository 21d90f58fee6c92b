public import Foundation
public import SyncFiles
public import SyncCommit

/// The steps that carry a plan out, decided with it: what is recorded, retired, set aside, folded,
/// rebuilt or overwritten, and what is told (each told once where the rule says so). The watcher
/// executes them in order and reports back only what a fold did (`settle`). No I/O.
extension Reconciler {
    /// One step the watcher carries out.
    public enum Effect: Sendable {
        /// Tell this event (through `tells`); `oncePerCopy`: only the first time that copy is told about.
        case tell(WatchEvent, oncePerCopy: String? = nil)
        /// Keep these versions of this device (by SHA-256) among the retired copies and forget them as
        /// pending; when one cannot be kept, stop here (told).
        case setAside([String])
        /// Record the version on disk as the base; the base it replaces is held by it (recorded as
        /// contained) or stays pending (`replacedIsHeld` false: it is being restored).
        case recordBase(TakeIn, replacedIsHeld: Bool)
        /// Forget this pending version (by SHA-256): the vault holds it, or it can never be merged here.
        case retire(String)
        /// Merge these copies and these pending versions (by SHA-256) into the vault in one commit,
        /// then report what that did to `settle`.
        case fold([CopyFile], restoring: [String])
        /// Put this copy back as the vault where none is, then check once more to fold the others in.
        case rebuild(CopyFile)
        /// Write this device's version over the version on disk (the disk's kept as a backup).
        case overwrite(with: Version)
    }

    /// The decision of one check: the plan, and the steps that carry it out.
    public struct Check: Sendable {
        /// What was decided.
        public var plan: Plan
        /// What the watcher does for it, in order.
        public var effects: [Effect]
    }

    /// The plan of one check (`plan`, called once) and its effects. `vault`: the vault's path, as
    /// events name it. `mayRebuild`: false in the check that follows a rebuild (a vault rebuilt is
    /// not rebuilt again in the same check: it is missing).
    public static func check(
        _ snapshot: FolderSnapshot, vault: String, versions: Versions, memory: inout Memory, now: Date, policy: Policy,
        copyHoldsNewer: Bool = false, decision: Decision? = nil, mayRebuild: Bool = true
    ) -> Check {
        let plan = plan(snapshot, versions: versions, memory: &memory, now: now, policy: policy, copyHoldsNewer: copyHoldsNewer,
                        decision: decision)
        var sha256 = ""
        if case .present(let fingerprint) = snapshot.vault { sha256 = fingerprint.sha256 }
        var effects: [Effect] = []
        func tellOnce(_ event: WatchEvent, _ told: inout Bool) {
            if !told { effects.append(.tell(event)) }
            told = true
        }
        if case .wait(.transfers) = plan {} else { memory.transferTold = false }
        switch plan {
        case .wait(.transfers(let transfers)):
            tellOnce(.waitingForSync(vault: vault, transfers: transfers), &memory.transferTold)
        case .fail(let message):
            effects.append(.tell(.error(vault: vault, message: message)))
        case .rebuild(let copy) where mayRebuild:
            effects.append(.rebuild(copy))
        case .wait(.rebuildElsewhere(let copies, let until)):
            tellOnce(.waitingForRebuild(vault: vault, copies: copies, until: until), &memory.rebuildWaitTold)
        case .wait(.vaultMissing), .rebuild:
            tellOnce(.vaultMissing(vault: vault), &memory.missingTold)
        case .wait(.rollbackHold(let problem, _)):
            tellOnce(.waitingForCopy(vault: vault, problem: problem, hold: policy.rollbackHold), &memory.rollbackHoldTold)
        case .refuse(let problem):
            memory.rollbackHoldTold = false
            effects.append(.tell(.refused(vault: vault, reason: problem, version: sha256)))
        case .ask:
            memory.rollbackHoldTold = false
            effects.append(.tell(.decisionNeeded(vault: vault, version: sha256)))
        case .noOwnVersion:
            break
        case .overwrite(let base):
            memory.rollbackHoldTold = false
            effects.append(.overwrite(with: base))
        case .reconcile(let reconciliation):
            memory.rollbackHoldTold = false
            effects = self.effects(of: reconciliation, vault: vault, memory: memory)
        }
        return Check(plan: plan, effects: effects)
    }

    /// The steps of a reconciliation: its own write told, this device's versions set aside (before
    /// the base is replaced: it may be one of them), the new version recorded, pending versions
    /// retired, copies reported, copies left as failed told once, then one fold.
    private static func effects(of plan: Reconciliation, vault: String, memory: Memory) -> [Effect] {
        var effects: [Effect] = []
        if plan.ownWriteSeen { effects.append(.tell(.ownWriteIgnored(vault: vault))) }
        if !plan.setAside.isEmpty { effects.append(.setAside(plan.setAside)) }
        if let takeIn = plan.takeIn, !plan.takeInOnlyByRestore {
            switch takeIn {
            case .first: effects.append(.tell(.baseRecorded(vault: vault)))
            case .changed(let changes): effects.append(.tell(.reloaded(vault: vault, changes: changes)))
            }
            effects.append(.recordBase(takeIn, replacedIsHeld: plan.replacedBaseIsHeld))
        }
        effects += plan.retire.map(Effect.retire)
        effects += plan.report.map { .tell(.conflictCopyFound(vault: vault, copy: $0.path)) }
        // Left because it failed before and has not changed: said once, not opened again.
        effects += plan.leftAsFailed.map {
            .tell(.conflictCopyLeft(vault: vault, copy: $0.path, reason: CopyFolding.Result(memory.failure(of: $0.path))), oncePerCopy: $0.path)
        }
        if !plan.fold.isEmpty || !plan.restoreFrom.isEmpty { effects.append(.fold(plan.fold, restoring: plan.restoreFrom)) }
        return effects
    }

    /// The vault file is there (before its versions are opened): its return is told if its absence
    /// was, and no transfer or rebuild is awaited any more.
    public static func vaultPresent(_ vault: String, memory: inout Memory) -> [Effect] {
        defer {
            memory.missingTold = false
            memory.rebuildWaitTold = false
            memory.transferTold = false
        }
        return memory.missingTold ? [.tell(.vaultBack(vault: vault))] : []
    }

    /// The vault was put back from `copy`: told, and it is no longer missing.
    public static func rebuilt(_ vault: String, from copy: CopyFile, memory: inout Memory) -> [Effect] {
        memory.missingTold = false
        memory.rebuildWaitTold = false
        return [.tell(.rebuiltFromCopy(vault: vault, copy: copy.path))]
    }

    /// Copies refused while gathering the rollback evidence: remembered as failed (not opened again
    /// while unchanged), except those put off for the allowance (opened once it has room).
    public static func evidenceRefused(_ refused: [(copy: CopyFile, reason: ForeignVersion.Refusal)], memory: inout Memory) {
        for (copy, reason) in refused where reason != .deferred { memory.copyFailed(copy, reason: reason) }
    }

    /// Whether `event` is told, and with `oncePerCopy`, whether that copy was not told about before
    /// (it is marked told).
    public static func tells(_ event: WatchEvent, oncePerCopy copy: String?, memory: inout Memory) -> Bool {
        if let copy, !memory.firstReport(of: copy) { return false }
        return tells(event, memory: &memory)
    }

    /// Whether a listing's `copies` hold one neither refused and told nor reported (the copy policy
    /// is not `ignore`): the engine checks again for them.
    public static func copiesOutstanding(_ copies: [CopyFile], memory: Memory, policy: Policy) -> Bool {
        policy.copies != .ignore && copies.contains { memory.failedCopies[$0.path] != $0 && !memory.reportedCopies.contains($0.path) }
    }

    /// Whether a transfer into the folder was told and is still awaited.
    public static func awaitsTransfer(_ memory: Memory) -> Bool { memory.transferTold }
}

public import Foundation
public import SyncCommit
public import MyPassCore

/// What follows a fold: the watcher reports what `CopyFolding` did, and `settle` decides the rest
/// (pending versions retired, copies forgotten or remembered as failed, what is told, whether to
/// check again). No I/O.
extension Reconciler {
    /// What a fold did, as the watcher reports it back.
    public enum FoldOutcome: Sendable {
        /// The copies and versions were merged (written or found in the vault already), or refused.
        case folded(CopyFolding.Report)
        /// Another program wrote the vault meanwhile (every attempt): the next check reads it.
        case changedOnDisk
        /// The fold failed: why.
        case failed(String)
    }

    /// What follows a fold.
    public struct Settlement: Sendable {
        /// Carried out in order: pending versions retired, events told.
        public var effects: [Effect] = []
        /// What the vault's content changed by: versions merged back, then copies merged.
        public var changes: [Change] = []
        /// Check again later (a copy changed meanwhile or put off, copies in their grace, a failure).
        public var retryLater = false
        /// Copies were put off until the vault's allowance has room.
        public var deferred = false
        /// What stopped it (told as an error event too).
        public var failure: String?
    }

    /// Said when a decision to merge this device's versions back into a refused version wrote nothing.
    static let restoreNotWritten = "this device's versions were not merged back (the vault changed meanwhile); nothing was taken, decide again"

    /// What follows the fold of `plan` (its `fold` and `restoreFrom`): every version merged is retired
    /// as pending (those restored, and a copy's that is a pending version, `copiesHeld`: path ->
    /// SHA-256), a restore is told, a restore a decision depends on that wrote nothing fails, and the
    /// copies' outcomes are applied (`apply`). `nextRoom`: when the vault's allowance has room again.
    public static func settle(
        _ outcome: FoldOutcome, of plan: Reconciliation, copiesHeld: [String: String], vault: String, nextRoom: Date,
        memory: inout Memory
    ) -> Settlement {
        var settled = Settlement()
        func failing(_ message: String) {
            settled.effects.append(.tell(.error(vault: vault, message: message)))
            settled.failure = settled.failure ?? message
            settled.retryLater = true
        }
        let report: CopyFolding.Report
        switch outcome {
        case .changedOnDisk:
            if plan.takeInOnlyByRestore { failing(restoreNotWritten) } else { settled.retryLater = true }
            return settled
        case .failed(let message):
            failing(message)
            return settled
        case .folded(let folded):
            report = folded
        }
        settled.changes = report.restored
        // Every version merged is in the vault now (written, or found there already).
        settled.effects += plan.restoreFrom.map(Effect.retire)
        for outcome in report.outcomes where [.merged, .nothingNew].contains(outcome.result) {
            if let sha256 = copiesHeld[outcome.copy] { settled.effects.append(.retire(sha256)) }
        }
        if !report.restored.isEmpty { settled.effects.append(.tell(.restored(vault: vault, changes: report.restored))) }
        if plan.takeInOnlyByRestore && !report.wroteVault { failing(restoreNotWritten) }
        let (notices, retryLater) = apply(report.outcomes, of: plan, to: &memory)
        for notice in notices {
            switch notice {
            case .merged(let outcome):
                settled.changes += outcome.changes
                settled.effects.append(.tell(.conflictCopyMerged(vault: vault, copy: outcome.copy, keptAs: outcome.movedTo ?? "",
                                                                 changes: outcome.changes, explanation: outcome.explanation)))
            case .retired(let outcome):
                settled.effects.append(.tell(.conflictCopyRetired(vault: vault, copy: outcome.copy, keptAs: outcome.movedTo ?? "")))
            case .left(let copy, let reason):
                settled.effects.append(.tell(.conflictCopyLeft(vault: vault, copy: copy, reason: CopyFolding.Result(reason))))
            case .waiting(let copies):
                settled.effects.append(.tell(.copiesWaiting(vault: vault, copies: copies, until: nextRoom)))
            }
        }
        settled.deferred = report.outcomes.contains { $0.result == .deferred }
        settled.retryLater = settled.retryLater || retryLater
        return settled
    }

    /// What the watcher tells about a copy after a fold.
    public enum CopyNotice: Sendable {
        /// Merged in (it brought changes), and kept on this device (`movedTo`).
        case merged(CopyFolding.Outcome)
        /// Everything it held was in the vault; kept on this device.
        case retired(CopyFolding.Outcome)
        /// Refused, and left where it is until it changes (told once).
        case left(copy: String, reason: ForeignVersion.Refusal)
        /// Put off: the vault's allowance for opening copies from elsewhere is spent for now (told once
        /// for all of them, until a fold puts none off).
        case waiting(copies: [String])
    }

    /// What a fold's outcomes mean: the copies merged or retired are forgotten as failed, refused
    /// ones remembered (not opened again while unchanged) and told once; a copy that changed while
    /// it was merged, or a plan with copies in their grace, is checked again. No I/O.
    public static func apply(
        _ outcomes: [CopyFolding.Outcome], of plan: Reconciliation, to memory: inout Memory
    ) -> (notices: [CopyNotice], retryLater: Bool) {
        var notices: [CopyNotice] = []
        var retryLater = plan.retryAt != nil
        let deferred = outcomes.filter { $0.result == .deferred }.map(\.copy)
        if deferred.isEmpty {
            memory.deferralTold = false
        } else {
            retryLater = true
            if !memory.deferralTold { notices.append(.waiting(copies: deferred)) }
            memory.deferralTold = true
        }
        for outcome in outcomes {
            switch outcome.result {
            case .deferred:
                break  // told above, tried again once the allowance has room
            case .merged, .nothingNew:
                memory.failedCopies[outcome.copy] = nil
                memory.failureReasons[outcome.copy] = nil
                notices.append(outcome.result == .merged ? .merged(outcome) : .retired(outcome))
            case .changedMeanwhile, .wouldMerge:
                retryLater = true
            case .gone:
                break  // its removal is a file event of its own: the next check lists the folder without it
            case .otherCredentials, .otherDatabase, .unreadable, .tooLarge, .tooCostly:
                let refusal = outcome.result.refusal ?? .unreadable
                if let copy = plan.fold.first(where: { $0.path == outcome.copy }) { memory.copyFailed(copy, reason: refusal) }
                if memory.firstReport(of: outcome.copy) { notices.append(.left(copy: outcome.copy, reason: refusal)) }
            }
        }
        return (notices, retryLater)
    }
}

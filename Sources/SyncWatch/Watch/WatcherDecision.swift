public import SyncCommit
public import MyPassCore

/// A person's decision on a vault the watcher waits about (a change on disk under the `ask` policy,
/// or a version it refused: a rollback, another database), and its answer. The decision is queued to
/// the vault's engine (`WatchEngine.decide`), taken by its loop at its next turn and handed to
/// `Reconciler.plan` for that one check: `reload` takes the version as it is (this device's versions
/// it lacks set aside), `merge` merges this device's back into it (a rollback only: two databases are
/// never merged), `overwrite` writes this device's version over it (`Reconciler.Plan.overwrite`,
/// the disk's kept as a backup). Each acts only on the version named; another one on disk is asked about.
public enum WatcherDecision {
    /// What a decision is answered with.
    public typealias Answer = Result<Outcome, Failure>

    /// Why a decision was not carried out.
    public enum Failure: Error, CustomStringConvertible, ClassifiedFailure, Sendable {
        /// This device has no version of its own for the vault (never synced it here).
        case noBase(String)
        /// The version on disk is no longer the one decided on: decide again.
        case changedSince(String)
        /// The version is refused under this decision too (two databases are not merged).
        case refused(String, Reconciler.Refusal)
        /// The vault no longer opens with these credentials.
        case keyChanged(String)
        /// The vault file does not parse.
        case unreadable(String, reason: String)
        /// Nothing could be done now (a transfer into the folder, the vault missing): why.
        case waiting(String, reason: String)
        /// A step failed: why.
        case failed(String, reason: String)
        /// The engine did not take it (stopped, or busy longer than the caller waits): why.
        case notTaken(String, reason: String)

        public var description: String {
            switch self {
            case .noBase(let path): "\(path): this device has no version of its own to overwrite with (no remembered base)"
            case .changedSince(let path): "\(path): the vault changed since the decision was asked for; nothing done, decide again"
            case .refused(let path, let refusal): "\(path): \(refusal)"
            case .keyChanged(let path): "\(path): the vault no longer opens with these credentials (its key was changed elsewhere); nothing done"
            case .unreadable(let path, let reason): "\(path): the vault cannot be read: \(reason)"
            case .waiting(let path, let reason): "\(path): \(reason); nothing done, decide again"
            case .failed(let path, let reason): "\(path): \(reason)"
            case .notTaken(let path, let reason): "\(path): the decision was not taken: \(reason)"
            }
        }

        public var failureKind: FailureKind {
            switch self {
            case .noBase: .invalidRequest
            case .changedSince, .refused: .refusedForSafety
            case .keyChanged: .wrongCredentials
            case .unreadable: .unreadableVault
            case .waiting, .failed, .notTaken: .ioError
            }
        }
    }

    /// What a decision did.
    public struct Outcome: Sendable {
        /// What was done.
        public enum Done: Sendable, Equatable {
            /// Nothing waited for a decision: the vault is the version this device synced.
            case nothingAwaited
            /// The version on disk was taken as it is.
            case takenAsItIs
            /// This device's newer versions were merged back into the version on disk.
            case mergedBack
            /// The version on disk was merged with this device's.
            case merged
            /// This device's version was written over the disk's.
            case overwritten
            /// The vault already held this device's version: nothing written.
            case nothingToOverwrite
        }

        /// What was done.
        public let done: Done
        /// What the vault's content changed by (taken in, merged back, overwritten).
        public let changes: [Change]
        /// Where the disk's version was kept (overwrite), if it was.
        public let backup: String?
        /// Whether the vault file was written.
        public let wroteFile: Bool

        /// What was done, in one line.
        public var summary: String {
            switch done {
            case .nothingAwaited: "nothing waited for a decision: the vault is the version this device synced"
            case .takenAsItIs: "the version on disk was taken as it is"
            case .mergedBack: "this device's newer versions were merged back into the version on disk"
            case .merged: "the version on disk was merged with this device's"
            case .overwritten: "this device's version was written over the disk's" + (backup.map { " (the disk's kept as \($0))" } ?? "")
            case .nothingToOverwrite: "nothing to write: the vault already held this device's version"
            }
        }
    }

    /// The answer to `decision` on the vault at `path`, from how the check that carried it out ended.
    package static func answer(_ ending: CheckEnding, to decision: Reconciler.Decision, vault path: String) -> Answer {
        switch ending {
        case .transferring: .failure(.waiting(path, reason: "a sync engine is transferring into the vault's folder"))
        case .waiting(let reason): .failure(.waiting(path, reason: reason))
        case .failed(let reason): .failure(.failed(path, reason: reason))
        case .keyChanged: .failure(.keyChanged(path))
        case .unreadable(let reason): .failure(.unreadable(path, reason: reason))
        case .refused(let refusal): .failure(.refused(path, refusal))
        case .asked: .failure(.changedSince(path))
        case .noOwnVersion: .failure(.noBase(path))
        case .overwrote(let resolution):
            .success(Outcome(done: resolution.wroteFile ? .overwritten : .nothingToOverwrite, changes: resolution.changes,
                             backup: resolution.backup, wroteFile: resolution.wroteFile))
        case .reconciled(let carried):
            if let failure = carried.failure { .failure(.failed(path, reason: failure)) } else { .success(outcome(of: carried, under: decision)) }
        }
    }

    /// What a reconciliation carried out under `decision` did.
    private static func outcome(of carried: CheckEnding.Carried, under decision: Reconciler.Decision) -> Outcome {
        let tookIn = carried.tookIn || carried.rebuilt
        let done: Outcome.Done = switch (decision.choice, !carried.restored.isEmpty, tookIn) {
        case (.overwrite, _, _): .nothingToOverwrite
        case (_, false, false): .nothingAwaited
        case (.reload, _, _): .takenAsItIs
        case (_, true, _): .mergedBack
        case (_, false, true): .merged
        }
        return Outcome(done: done, changes: carried.changes, backup: nil, wroteFile: carried.wroteVault || carried.rebuilt)
    }
}

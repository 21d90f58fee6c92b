public import SyncCommit
public import MyPassCore

/// How one check of a vault ended, from its plan and what carrying it out did: the engine schedules
/// the next check by it, and a person's decision is answered from it (`WatcherDecision.answer`).
package enum CheckEnding {
    /// A sync engine is transferring the vault or a copy into the folder.
    case transferring
    /// Nothing can be done now (the vault missing, a rebuild left to another device, a rollback held
    /// for its copy): why.
    case waiting(String)
    /// The folder or the vault could not be read, or a step failed: why.
    case failed(String)
    /// The vault no longer opens with these credentials.
    case keyChanged
    /// The vault file does not parse (yet): why.
    case unreadable(String)
    /// The version on disk was refused.
    case refused(Reconciler.Refusal)
    /// A person's decision is needed about the version on disk (its SHA-256); under a decision, the
    /// version there is not the one it named.
    case asked(String)
    /// The version on disk was overwritten with this device's.
    case overwrote(SyncSession.Resolution)
    /// An overwrite was decided and this device has no version of its own.
    case noOwnVersion
    /// The plan was carried out.
    case reconciled(Carried)

    /// What carrying out a reconciliation (or a rebuild) did.
    package struct Carried {
        /// False: check again later (copies in their grace or changed meanwhile, a failure).
        var done = true
        /// The version on disk was recorded as the vault's base (first sync, or a change taken in).
        var tookIn = false
        /// The vault was put back from a copy a sync engine renamed aside.
        var rebuilt = false
        /// What this device's versions merged back brought.
        var restored: [Change] = []
        /// Everything the vault's content changed by: taken in, merged back, copies folded.
        var changes: [Change] = []
        /// Whether the vault file was written.
        var wroteVault = false
        /// What stopped it (told as an error event too).
        var failure: String?
    }

    /// Whether the check is done (false: try again later, as `VaultWatcher.check` returns).
    var succeeded: Bool {
        switch self {
        case .transferring, .waiting, .failed, .unreadable: false
        case .keyChanged, .refused, .asked, .overwrote, .noOwnVersion: true
        case .reconciled(let carried): carried.done
        }
    }
}

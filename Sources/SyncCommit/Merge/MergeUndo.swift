internal import Foundation
internal import SyncFiles
public import SyncState
internal import KDBXFormat
public import MyPassCore
internal import MyPassMerge
internal import MyPassCrypto

/// Why a journal record cannot be shown or undone.
public enum JournalError: Error, CustomStringConvertible, Sendable {
    /// No record with this id (it never existed, or retention removed it).
    case noSuchRecord(String)
    /// The record's files are incomplete.
    case incomplete(String)

    public var description: String {
        switch self {
        case .noSuchRecord(let id): "no merge \(id) in this vault's journal (see `journal VAULT`; records are kept \(MergeJournal.maximumCount) deep, \(Int(MergeJournal.maximumAge / 86_400)) days)"
        case .incomplete(let id): "the journal record \(id) is incomplete; it cannot be used"
        }
    }
}

extension MergeJournal {
    /// How merge `id` decided each property (opened with the vault's key).
    public func explanation(of id: String, unlocked: UnlockedVault) throws -> [FieldDecision] {
        guard record(id) != nil else { throw JournalError.noSuchRecord(id) }
        guard let sealed = stored(id, .explanation) else { throw JournalError.incomplete(id) }
        return try SealedExplanation.open(sealed, key: unlocked.requireCredentials().key, cachedKey: unlocked.opened.derivedKey,
                                          limits: unlocked.file.limits)
    }
}

/// Takes one journaled merge back as a new edit, saved like any edit (compare-and-swap, a change
/// made meanwhile merged in): the other devices then converge on it.
public enum MergeUndo {
    /// What `undo` did (`--json`: schema 1).
    public struct Report: Sendable, Encodable {
        public let schema = 1
        /// The merge taken back.
        public let record: String
        /// What was taken back.
        public let reverted: [Change]
        /// What the merge changed but was edited again since: left as it is.
        public let keptEditedSince: [Change]
        /// Whether the vault file was written.
        public let written: Bool
        public let dryRun: Bool
    }

    /// Undoes merge `id` of the journal in the vault `unlocked`.
    public static func run(_ id: String, journal: MergeJournal, unlocked: UnlockedVault, state: SyncStateStore, dryRun: Bool) throws -> Report {
        guard journal.record(id) != nil else { throw JournalError.noSuchRecord(id) }
        guard let beforeBytes = journal.stored(id, .before), let afterBytes = journal.stored(id, .after) else { throw JournalError.incomplete(id) }
        let key = try unlocked.requireCredentials().key
        let before = try KDBXReader.open(beforeBytes, key: key, cachedKey: unlocked.opened.derivedKey, limits: unlocked.file.limits)
        let after = try KDBXReader.open(afterBytes, key: key, cachedKey: unlocked.opened.derivedKey, limits: unlocked.file.limits)
        let outcome = try MergeReverter.revert(current: unlocked.vault, before: before.vault, after: after.vault)
        var written = false
        if !dryRun && !VaultDiff.sameContent(outcome.vault, unlocked.vault) {
            let session = try unlocked.session(state: state, settings: DeviceSettings.load())
            let reverted = MergeCommit.Merged(vault: outcome.vault, steps: [], inputs: [MergeCommit.Input(
                name: "journal record \(id)", vault: before.vault, sha256: SHA256.hexHash(beforeBytes), base: .none)])
            written = try MergeCommit.commit(reverted, through: session, journal: .undo).wroteFile
        }
        return Report(record: id, reverted: outcome.reverted, keptEditedSince: outcome.keptEditedSince, written: written, dryRun: dryRun)
    }
}

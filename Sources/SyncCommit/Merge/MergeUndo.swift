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
    /// A file of the record is not what the record says it holds (changed, replaced, or of another
    /// database): the record is not used.
    case damaged(String, detail: String)
    /// The record's files were sealed with the vault's key before a master-key change.
    case sealedWithOtherKey(String)

    public var description: String {
        switch self {
        case .noSuchRecord(let id): "no merge \(id) in this vault's journal (see `journal VAULT`; records are kept \(MergeJournal.maximumCount) deep, \(Int(MergeJournal.maximumAge / 86_400)) days)"
        case .incomplete(let id): "the journal record \(id) is incomplete; it cannot be used"
        case .damaged(let id, let detail): "the journal record \(id) is damaged (\(detail)); it cannot be used, nothing was changed"
        case .sealedWithOtherKey(let id):
            "the journal record \(id) does not open with this vault's current credentials: it was written before the master key "
                + "changed and opens only with the credentials the vault had then (re-sealing it would need that key)"
        }
    }
}

extension JournalError: ClassifiedFailure {
    /// An unknown or incomplete record is a wrong request; a damaged one is refused for safety; one
    /// sealed with an earlier key needs other credentials.
    public var failureKind: FailureKind {
        switch self {
        case .noSuchRecord, .incomplete: .invalidRequest
        case .damaged: .refusedForSafety
        case .sealedWithOtherKey: .wrongCredentials
        }
    }
}

extension MergeJournal {
    /// How merge `id` decided each property (opened with the vault's key).
    public func explanation(of id: String, unlocked: UnlockedVault) throws -> [FieldDecision] {
        guard record(id) != nil else { throw JournalError.noSuchRecord(id) }
        guard let sealed = stored(id, .explanation) else { throw JournalError.incomplete(id) }
        do {
            return try SealedExplanation.open(sealed, key: unlocked.requireCredentials().key, cachedKey: unlocked.opened.derivedKey,
                                              limits: unlocked.file.limits)
        } catch KDBXError.wrongCredentials {
            throw JournalError.sealedWithOtherKey(id)
        }
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
    public static func run(_ id: String, journal: MergeJournal, unlocked: UnlockedVault, state: SyncStateStore,
                           settings: DeviceSettings, dryRun: Bool) throws -> Report {
        guard let record = journal.record(id) else { throw JournalError.noSuchRecord(id) }
        guard let beforeBytes = journal.stored(id, .before), let afterBytes = journal.stored(id, .after),
              let sealed = journal.stored(id, .explanation) else { throw JournalError.incomplete(id) }
        // The record and its files could have been put there by anyone who can write the state: only the
        // versions sealed with the vault's key are the ones this device journaled.
        let journaled: (before: String, after: String)?
        do {
            journaled = try SealedExplanation.journaledVersions(sealed, key: unlocked.requireCredentials().key,
                                                                cachedKey: unlocked.opened.derivedKey, limits: unlocked.file.limits)
        } catch KDBXError.wrongCredentials {
            throw JournalError.sealedWithOtherKey(id)
        } catch {
            throw JournalError.damaged(id, detail: "its sealed explanation does not read: \(error)")
        }
        guard let journaled else {
            throw JournalError.damaged(id, detail: "it does not seal which versions were journaled (written by an older mypass-sync)")
        }
        guard journaled.before == record.beforeSHA256, journaled.after == record.afterSHA256 else {
            throw JournalError.damaged(id, detail: "its before and after are not the versions this device journaled")
        }
        let before = try open(beforeBytes, as: .before, of: record, unlocked: unlocked)
        let after = try open(afterBytes, as: .after, of: record, unlocked: unlocked)
        guard isVersion(after.vault, madeFrom: before.vault) else {
            throw JournalError.damaged(id, detail: "its before.kdbx and after.kdbx are not one merge of this database")
        }
        let outcome = try MergeReverter.revert(current: unlocked.vault, before: before.vault, after: after.vault)
        var written = false
        if !dryRun {
            let session = try unlocked.session(state: state, settings: settings)
            let reverted = MergeCommit.Merged(vault: outcome.vault, steps: [], inputs: [MergeCommit.Input(
                name: "journal record \(id)", vault: before.vault, sha256: SHA256.hexHash(beforeBytes), base: .none)])
            written = try MergeCommit.write(.merged(reverted), through: session, journal: .undo).wroteFile
        }
        return Report(record: id, reverted: outcome.reverted, keptEditedSince: outcome.keptEditedSince, written: written, dryRun: dryRun)
    }

    /// Whether `after` can be a merge result of `before`: every entry of `before` is still there or
    /// deleted with a tombstone (two databases made from one template share the root group).
    private static func isVersion(_ after: Vault, madeFrom before: Vault) -> Bool {
        let kept = Set(after.root.allEntries().map(\.entry.uuid)).union(after.deletedObjects.map(\.uuid))
        return before.root.allEntries().allSatisfy { kept.contains($0.entry.uuid) }
    }

    /// A file of `record`, used only when it has the SHA-256 the record holds for it, opens with
    /// the vault's key and is a version of the same database as the vault.
    private static func open(_ bytes: Data, as part: MergeJournal.Part, of record: MergeJournal.Record,
                             unlocked: UnlockedVault) throws -> OpenedVault {
        let expected = part == .before ? record.beforeSHA256 : record.afterSHA256
        guard SHA256.hexHash(bytes) == expected else {
            throw JournalError.damaged(record.id, detail: "its \(part.rawValue) is not the file the record was written with")
        }
        let opened: OpenedVault
        do {
            opened = try KDBXReader.open(bytes, key: unlocked.requireCredentials().key, cachedKey: unlocked.opened.derivedKey,
                                         limits: unlocked.file.limits)
        } catch KDBXError.wrongCredentials {
            throw JournalError.sealedWithOtherKey(record.id)
        } catch let error as KDBXError {
            throw JournalError.damaged(record.id, detail: "its \(part.rawValue) does not read: \(error)")
        }
        guard DatabaseIdentity(opened.vault) == DatabaseIdentity(unlocked.vault) else {
            throw JournalError.damaged(record.id, detail: "its \(part.rawValue) is another database")
        }
        return opened
    }
}

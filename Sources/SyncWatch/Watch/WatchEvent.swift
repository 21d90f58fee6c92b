public import Foundation
internal import SyncFiles
internal import SyncState
public import SyncCommit
public import MyPassCore

/// One thing that happened while watching vaults, with what it is about. `kind` names it (the
/// `kind` of the JSON lines), `detail` says it in one line of text, `changes` lists what it changed.
public enum WatchEvent: Sendable, Equatable {
    /// First sync of this vault on this device: its version is recorded as the base.
    case baseRecorded(vault: String)
    /// A conflict copy is beside the vault (copy policy `report`).
    case conflictCopyFound(vault: String, copy: String)
    /// A conflict copy could not be merged and stays in the folder.
    case conflictCopyLeft(vault: String, copy: String, reason: CopyFolding.Result)
    /// A conflict copy was merged in and is kept on this device at `keptAs`; `explanation` says how
    /// each property the vault and the copy differed on was decided.
    case conflictCopyMerged(vault: String, copy: String, keptAs: String, changes: [Change], explanation: [FieldDecision])
    /// A conflict copy carried nothing new: retired (kept at `keptAs`) without writing the vault.
    case conflictCopyRetired(vault: String, copy: String, keptAs: String)
    /// The vault changed on disk and the policy is `ask`; `version`: the SHA-256 of the version on
    /// disk a decision is about.
    case decisionNeeded(vault: String, version: String)
    /// A step failed (reported once until something else happens; the engine backs off).
    case error(vault: String, message: String)
    /// The vault no longer opens with these credentials (its key was changed elsewhere): nothing done.
    case keyChanged(vault: String)
    /// The change seen is the watcher's own write.
    case ownWriteIgnored(vault: String)
    /// A rollback or another database was refused; `version`: the SHA-256 of the version refused,
    /// which a decision is about.
    case refused(vault: String, reason: Reconciler.Refusal, version: String)
    /// A change made elsewhere was taken in.
    case reloaded(vault: String, changes: [Change])
    /// A version that lacked synced content (a blind save) was put right.
    case restored(vault: String, changes: [Change])
    /// The file does not parse (yet): retried after a quiet period, never repaired or overwritten.
    case unreadable(vault: String, reason: String)
    /// The vault file is back.
    case vaultBack(vault: String)
    /// The vault file is gone: waiting for it to come back (never treated as an empty vault).
    case vaultMissing(vault: String)
    /// A sync engine renamed both versions aside and left no vault (rclone bisync): the copy that is
    /// this device's own version (`copy`) is the vault again; the other copies are merged into it next.
    case rebuiltFromCopy(vault: String, copy: String)
    /// The vault is gone and only copies renamed aside on another device are here: that device
    /// rebuilds the vault; this one does only after `until`.
    case waitingForRebuild(vault: String, copies: [String], until: Date)
    /// A version that looks like a rollback is held up to `hold` seconds for the conflict copy with the newer versions.
    case waitingForCopy(vault: String, problem: Reconciler.Refusal, hold: Double)
    /// A sync engine is transferring the vault or a copy into the folder (its temporary files named).
    case waitingForSync(vault: String, transfers: [String])
    /// Conflict copies wait: the vault's allowance of time for opening versions from elsewhere
    /// (`ForeignWorkAllowance`) is spent; they are tried again once it has room, at `until`.
    case copiesWaiting(vault: String, copies: [String], until: Date)
    /// A shared group (KeeShare) was kept in step with its container: `changes` imported into the
    /// group (from the container and its conflict copies), `exported`: the container was written.
    case shareSynced(vault: String, group: String, changes: [Change], exported: Bool)
    /// A shared group's container was not read or written (its reason, never a password or value);
    /// also a reference waiting for a person's approval on this device.
    case shareIdle(vault: String, group: String, reason: String)
    /// A shared group's reference came from elsewhere and waits for a person's approval on this
    /// device; `reference`: its approval digest, which an approval names (never the password).
    case shareAwaitsApproval(vault: String, group: String, groupID: UUID, reference: String)
    /// Events were lost (the inotify queue overflowed) or a folder came back: the vault is checked again.
    case rescan(vault: String)
    /// File events cannot be used (the watch limit, say): the folders are polled.
    case pollingOnly(reason: String)
    /// The watch ended.
    case stopped

    /// The name of each kind of event.
    public enum Kind: String, Sendable, Encodable, CaseIterable {
        case baseRecorded, conflictCopyFound, conflictCopyLeft, conflictCopyMerged, conflictCopyRetired, decisionNeeded, error,
             keyChanged, ownWriteIgnored, refused, reloaded, restored, unreadable, vaultBack, vaultMissing, rebuiltFromCopy,
             waitingForRebuild, waitingForCopy, waitingForSync, copiesWaiting, shareSynced, shareIdle, shareAwaitsApproval, rescan, pollingOnly, stopped

        /// A problem: reported once until something else happens, and the engine backs off.
        public var isProblem: Bool { self == .error || self == .unreadable }
    }

    /// The event's name.
    public var kind: Kind {
        switch self {
        case .baseRecorded: .baseRecorded
        case .conflictCopyFound: .conflictCopyFound
        case .conflictCopyLeft: .conflictCopyLeft
        case .conflictCopyMerged: .conflictCopyMerged
        case .conflictCopyRetired: .conflictCopyRetired
        case .decisionNeeded: .decisionNeeded
        case .error: .error
        case .keyChanged: .keyChanged
        case .ownWriteIgnored: .ownWriteIgnored
        case .refused: .refused
        case .reloaded: .reloaded
        case .restored: .restored
        case .unreadable: .unreadable
        case .vaultBack: .vaultBack
        case .vaultMissing: .vaultMissing
        case .rebuiltFromCopy: .rebuiltFromCopy
        case .waitingForRebuild: .waitingForRebuild
        case .waitingForCopy: .waitingForCopy
        case .waitingForSync: .waitingForSync
        case .copiesWaiting: .copiesWaiting
        case .shareSynced: .shareSynced
        case .shareIdle: .shareIdle
        case .shareAwaitsApproval: .shareAwaitsApproval
        case .rescan: .rescan
        case .pollingOnly: .pollingOnly
        case .stopped: .stopped
        }
    }

    /// The vault the event is about ("" for the engine as a whole).
    public var vault: String {
        switch self {
        case .baseRecorded(let vault), .conflictCopyFound(let vault, _), .conflictCopyLeft(let vault, _, _),
             .conflictCopyMerged(let vault, _, _, _, _), .conflictCopyRetired(let vault, _, _), .decisionNeeded(let vault, _),
             .error(let vault, _), .keyChanged(let vault), .ownWriteIgnored(let vault), .refused(let vault, _, _),
             .reloaded(let vault, _), .restored(let vault, _), .unreadable(let vault, _), .vaultBack(let vault),
             .vaultMissing(let vault), .rebuiltFromCopy(let vault, _), .waitingForRebuild(let vault, _, _), .waitingForCopy(let vault, _, _), .waitingForSync(let vault, _), .rescan(let vault),
             .copiesWaiting(let vault, _, _), .shareSynced(let vault, _, _, _), .shareIdle(let vault, _, _),
             .shareAwaitsApproval(let vault, _, _, _):
            vault
        case .pollingOnly, .stopped:
            ""
        }
    }

    /// What changed in the vault (names and paths, never values).
    public var changes: [Change] {
        switch self {
        case .conflictCopyMerged(_, _, _, let changes, _), .reloaded(_, let changes), .restored(_, let changes),
             .shareSynced(_, _, let changes, _): changes
        default: []
        }
    }

    /// How a merge decided each differing property (only for a merged conflict copy).
    public var explanation: [FieldDecision] {
        if case .conflictCopyMerged(_, _, _, _, let explanation) = self { return explanation }
        return []
    }

    /// The event in one line of text.
    public var detail: String {
        switch self {
        case .baseRecorded: "first sync of this vault on this device"
        case .conflictCopyFound(_, let copy): copy
        case .conflictCopyLeft(_, let copy, let reason): "\(copy): \(reason.rawValue)"
        case .conflictCopyMerged(_, let copy, let keptAs, _, _): "\(copy) -> \(keptAs)"
        case .conflictCopyRetired(_, let copy, let keptAs): "\(copy) -> \(keptAs): it carried nothing new; the vault was not written for it"
        case .decisionNeeded: "the vault changed on disk; a decision is needed (resolve it, or watch with the merge or reload policy)"
        case .error(_, let message): message
        case .keyChanged: "the vault no longer opens with these credentials (its key was changed elsewhere); nothing done"
        case .ownWriteIgnored: "the vault as this watcher wrote it"
        case .refused(_, let reason, _): reason.description
        case .reloaded: "changed on disk by another program"
        case .restored:
            "the new version lacked content of a version this device wrote or saw, with no deletion recorded (a program saved over a version it had not read, or the sync engine lost a conflict copy); put back"
        case .unreadable(_, let reason): "\(reason); retrying after a quiet period (never repaired or overwritten)"
        case .vaultBack: ""
        case .vaultMissing: "waiting for it to come back (not treated as an empty vault)"
        case .rebuiltFromCopy(_, let copy):
            "the sync engine renamed both versions aside and left no vault; this device's version (\(copy)) is the vault again, the other copies are merged into it"
        case .waitingForRebuild(_, let copies, let until):
            "the sync engine renamed both versions aside on another device (\(copies.joined(separator: ", "))); that device rebuilds the vault; this one rebuilds it from the copies after \(ISO8601DateFormatter().string(from: until)) if it has not come by then"
        case .waitingForCopy(_, let problem, let hold):
            "\(problem); waiting up to \(Int(hold)) s for a conflict copy that holds the newer versions"
        case .waitingForSync(_, let transfers):
            "a sync engine is transferring \(transfers.joined(separator: ", ")); waiting until it is done"
        case .copiesWaiting(_, let copies, let until):
            "\(copies.count) conflict cop\(copies.count == 1 ? "y waits" : "ies wait") until \(ISO8601DateFormatter().string(from: until)): opening versions from elsewhere took this vault's allowance of time (copies planted to keep the computer busy cannot)"
        case .shareSynced(_, let group, let changes, let exported):
            "shared group \(group): " + [changes.isEmpty ? nil : "\(changes.count) change(s) imported", exported ? "container written" : nil]
                .compactMap { $0 }.joined(separator: ", ")
        case .shareIdle(_, let group, let reason): "shared group \(group): \(reason)"
        case .shareAwaitsApproval(_, let group, _, _):
            "shared group \(group): its KeeShare reference came from elsewhere and does nothing here until approved (`mypass-sync share approve`)"
        case .rescan: "inotify queue overflowed; checking again"
        case .pollingOnly(let reason): reason
        case .stopped: "the watch was stopped"
        }
    }

    /// The event as one JSON line (schema 1): `time`, `kind`, `vault`, `detail`, `changes`, and for a
    /// merged copy `explanation`; keys sorted.
    public func jsonLine(at time: Date) -> String {
        let line = JSONLine(time: ISO8601DateFormatter().string(from: time), kind: kind, vault: vault, detail: detail, changes: changes,
                            explanation: explanation.isEmpty ? nil : explanation)
        return (try? JSONText.line(line)) ?? "{}"
    }

    private struct JSONLine: Encodable {
        let schema = 1
        let time: String
        let kind: Kind
        let vault: String
        let detail: String
        let changes: [Change]
        let explanation: [FieldDecision]?
    }
}

internal import Foundation
internal import SyncFiles
package import SyncState
internal import KDBXFormat
internal import MyPassCore
internal import MyPassMerge

extension MergeCommit {
    /// What a write carries into the vault file.
    package enum Work {
        /// Inputs merged into the session's snapshot (`merge`): journaled whenever the file is written.
        case merged(Merged)
        /// The session's snapshot as edited: journaled only when a version written meanwhile is merged in.
        case edits
        /// The session's edits over a version written meanwhile that was already read (`resolve --merge`): merged in first.
        case editsOver(SyncSession.Conflict)
    }

    /// The one door through which every merge is written: `work` goes through `session`'s
    /// compare-and-swap; a version another writer saved meanwhile is merged in and the swap tried
    /// again; a write that merged something is journaled once as `kind`. Nothing is written or
    /// journaled when the file already holds the content.
    @discardableResult
    package static func write(_ work: Work, through session: SyncSession, journal kind: MergeJournal.Kind) throws -> Outcome {
        if case .merged(let merged) = work {
            take(merged, into: session)
            #if MYPASS_TEST_HOOKS
            CommitTestHook.beforeSave()
            #endif
        }
        let save = try session.holdingLock {
            if case .editsOver(let conflict) = work { return try mergeFromDisk(conflict, into: session) }
            switch try session.saveHoldingLock() {
            case .saved: return Outcome(mergedFromDisk: [], wroteFile: true)
            case .unchanged: return Outcome(mergedFromDisk: [], wroteFile: false)
            case .conflict(let conflict): return try mergeFromDisk(conflict, into: session)
            }
        }
        if save.wroteFile, let before = session.replacedBytes {
            switch work {
            case .merged(let merged):
                journal(kind, of: session, before: before, inputs: merged.inputs.map { .init(name: $0.name, sha256: $0.sha256) },
                        changes: merged.steps.map(\.changes.count).reduce(0, +) + save.mergedFromDisk.count,
                        decisions: merged.steps.flatMap(\.decisions) + save.decisions)
            case .edits, .editsOver:
                // Edits alone are no merge; the version written meanwhile is what was merged (the bytes the swap replaced).
                guard save.mergedDiskVersion else { break }
                journal(kind, of: session, before: before, inputs: [.init(name: session.path + " (on disk)", bytes: before)],
                        changes: save.mergedFromDisk.count, decisions: save.decisions)
            }
        }
        return save
    }

    /// Makes `merged` the session's snapshot, with the key and format it is to be written in.
    private static func take(_ merged: Merged, into session: SyncSession) {
        if let key = merged.adoptedKey { session.adoptCredentials(key: key.key, settings: key.settings, derivedKey: key.derivedKey) }
        if let format = merged.format { session.adoptFormat(format) }
        // A merge that brought content into a snapshot of the file's content is known to differ from
        // the file; one that brought none is compared with it (only its form may differ).
        session.takeMerge(merged.vault, content: merged.bringsContent && session.matchesDisk ? .knownToDiffer : .compareWithFile)
    }

    /// Merges the version on disk (`conflict`, and any newer one that arrives meanwhile) into the
    /// session's snapshot and saves, the session's lock held.
    private static func mergeFromDisk(_ conflict: SyncSession.Conflict, into session: SyncSession) throws -> Outcome {
        var current = conflict
        for _ in 0..<SyncSession.maximumAttempts {
            // Against the version this session's work was made from (the file it read, or last
            // merged with): the state's record may be a version another writer on this device
            // recorded since, which the work never held. Used only where both sides descend from it.
            var (merged, step) = try merge(current.disk.vault, from: session.path, into: session.vault,
                                           base: session.workMadeFrom.map { .remembered($0) } ?? .none)
            // The other writer's cipher, KDF and compression are merged too (MERGE.md rule 13): a
            // stronger KDF saved meanwhile is not written over by this session's older one.
            let format = FormatMerge.merge(
                ancestor: session.workMadeFromFormat.map { .init(settings: $0, settingsChanged: session.workMadeFrom?.meta.settingsChanged) },
                local: .init(settings: session.settings, meta: session.vault.meta),
                remote: .init(settings: current.disk.settings, meta: current.disk.vault.meta))
            step.record(format, title: merged.meta.databaseName)
            merged.meta.stampSettings(format)
            session.takeMerge(merged, over: current)
            session.adoptFormat(format.settings)
            if let wrote = try session.saveHoldingLock().wroteFile {
                return Outcome(mergedFromDisk: step.changes, wroteFile: wrote, decisions: step.decisions, warnings: step.warnings,
                               mergedDiskVersion: true)
            }
            current = try session.readDisk()
        }
        throw SaveError.changedOnDisk(current: current.diskFingerprint)
    }
}

/// The documented test convenience `MYPASS_SYNC_BEFORE_COMMIT=PATH`: a merge about to be written
/// creates `PATH.waiting` and waits (up to 30 s) until `PATH.go` exists, so that a test can stop the
/// process (SIGTERM to the daemon) in the middle of a merge. Unset it does nothing; a release build
/// (`MYPASS_TEST_HOOKS` undefined) has none.
#if MYPASS_TEST_HOOKS
enum CommitTestHook {
    static func beforeSave() {
        guard let path = ProcessInfo.processInfo.environment["MYPASS_SYNC_BEFORE_COMMIT"], !path.isEmpty else { return }
        _ = FileManager.default.createFile(atPath: path + ".waiting", contents: Data())
        let deadline = Date().addingTimeInterval(30)
        while !FileManager.default.fileExists(atPath: path + ".go") && Date() < deadline { usleep(20_000) }
    }
}
#endif

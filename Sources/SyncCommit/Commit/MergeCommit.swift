internal import Foundation
internal import SyncFiles
package import SyncState
internal import KDBXFormat
package import MyPassCore
internal import MyPassMerge

/// The one pipeline that writes a vault after a merge: every merge of other versions into a vault
/// (`merge`, `conflicts --merge`, the watcher's folds, restores and take-ins, entry commands that
/// meet a concurrent change) ends here.
///
/// 1. merge the inputs into the session's snapshot, one after the other, each against its own base;
/// 2. compare the result with the file's content: **equal content → no write** (`SyncSession`
///    holds this rule for every save of a merge);
/// 3. save by verified compare-and-swap, merging again when the file changed meanwhile;
/// 4. record the written version as the base (the session does, on every save);
/// 5. journal once, with the bytes the swap replaced as "before".
///
/// Retiring what was merged (copies, pending versions) is the caller's, after `commit` returned:
/// only then is the merged content durably in the vault.
package enum MergeCommit {
    /// One other version to merge in.
    package struct Input {
        /// What it is called in reports and the journal (a path, never a value).
        package let name: String
        /// Its content.
        package let vault: Vault
        /// The SHA-256 (hex) of the bytes it was opened from, for the journal.
        package let sha256: String?
        /// The common ancestor to merge it against.
        package let base: MergeJob.Base

        /// The version `vault`, called `name`, opened from bytes hashing to `sha256`, merged against `base`.
        package init(name: String, vault: Vault, sha256: String?, base: MergeJob.Base) {
            self.name = name
            self.vault = vault
            self.sha256 = sha256
            self.base = base
        }
    }

    /// The inputs merged in memory.
    package struct Merged {
        /// The snapshot with every input merged in.
        package let vault: Vault
        /// What each input brought, in order.
        package let steps: [MergeJob.Step]
        /// The inputs, in order.
        package let inputs: [Input]

        /// `vault`, the merge of `inputs`, which brought `steps`.
        package init(vault: Vault, steps: [MergeJob.Step], inputs: [Input]) {
            self.vault = vault
            self.steps = steps
            self.inputs = inputs
        }

        /// Whether any input changed the snapshot's content.
        package var bringsContent: Bool { steps.contains(where: \.newContent) }
    }

    /// What `commit` did.
    package struct Outcome {
        /// Whether the vault file was replaced.
        package let wroteFile: Bool
        /// What a version written meanwhile by another program brought (merged in on the swap).
        package let mergedFromDisk: [Change]
    }

    /// `inputs` merged one after the other into `vault` (no I/O).
    package static func merge(_ inputs: [Input], into vault: Vault) throws -> Merged {
        var merged = vault
        var steps: [MergeJob.Step] = []
        for input in inputs {
            let (result, step) = try MergeJob.merge(input.vault, from: input.name, into: merged, base: input.base)
            merged = result
            steps.append(step)
        }
        return Merged(vault: merged, steps: steps, inputs: inputs)
    }

    /// Writes `merged` through `session` (whose snapshot it was merged into) and journals it once as
    /// `kind`; nothing is written or journaled when the file already holds its content.
    package static func commit(_ merged: Merged, through session: SyncSession, journal kind: MergeJournal.Kind) throws -> Outcome {
        // A merge that brought content into a snapshot of the file's content is known to differ from
        // the file; one that brought none is compared with it (only its form may differ).
        session.updateWithMerge(merged.vault, addsContent: merged.bringsContent && session.matchesDisk)
        CommitTestHook.beforeSave()
        let save = try session.saveMerging(journaling: false)
        if save.wroteFile, let before = session.replacedBytes {
            let changes = merged.steps.map(\.changes.count).reduce(0, +) + save.mergedFromDisk.count
            session.journalMerge(kind, before: before, inputs: merged.inputs.map { .init(name: $0.name, sha256: $0.sha256) },
                                 changes: changes, decisions: merged.steps.flatMap(\.decisions))
        }
        return Outcome(wroteFile: save.wroteFile, mergedFromDisk: save.mergedFromDisk)
    }
}

/// The documented test convenience `MYPASS_SYNC_BEFORE_COMMIT=PATH`: a merge about to be written
/// creates `PATH.waiting` and waits (up to 30 s) until `PATH.go` exists, so that a test can stop the
/// process (SIGTERM to the daemon) in the middle of a merge. Unset it does nothing; a release build
/// (`MYPASS_TEST_HOOKS` undefined) has none.
enum CommitTestHook {
    static func beforeSave() {
        #if MYPASS_TEST_HOOKS
        guard let path = ProcessInfo.processInfo.environment["MYPASS_SYNC_BEFORE_COMMIT"], !path.isEmpty else { return }
        _ = FileManager.default.createFile(atPath: path + ".waiting", contents: Data())
        let deadline = Date().addingTimeInterval(30)
        while !FileManager.default.fileExists(atPath: path + ".go") && Date() < deadline { usleep(20_000) }
        #endif
    }
}

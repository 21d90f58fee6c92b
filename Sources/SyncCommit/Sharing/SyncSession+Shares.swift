public import MyPassCore
public import SyncFiles
public import MyPassMerge

extension SyncSession {
    /// What one pass over the vault's shared groups did.
    public struct SharePass: Sendable {
        /// Per shared group: what was imported, whether the container was written, why not.
        public let outcomes: [ShareSync.Outcome]
        /// Whether the vault was written (an import changed it).
        public let wroteVault: Bool
    }

    /// One pass over the vault's shared groups (`ShareSync`): the containers of importing shares are
    /// merged into their groups and the vault saved through the one merge door (`saveMerging`), then the
    /// containers of exporting shares are written from the saved vault. `dryRun` writes nothing.
    /// `copyNaming`: how the sync engines here name a container's conflict copies.
    /// `allowance`: the vault's time for versions from elsewhere that fail to open (a watcher's).
    public func syncShares(dryRun: Bool = false, explaining: SecretFingerprint? = nil, copyNaming: ConflictCopies.Naming = .standard,
                           allowance: ForeignWorkAllowance? = nil) throws -> SharePass {
        let shares = ShareSync(vaultPath: path, state: state, copyNaming: copyNaming, allowance: allowance)
        var wroteVault = false
        var outcomes: [ShareSync.Outcome] = []
        // A container that changes while it is taken in is taken in again before it is written (a few times at most).
        for attempt in 0..<3 {
            let imported = shares.importing(into: vault, explaining: explaining)
            if !dryRun {
                if imported.outcomes.contains(where: { !$0.imported.isEmpty }) {
                    update(imported.vault)
                    wroteVault = try saveMerging().wroteFile || wroteVault
                }
                try shares.record(imported.pending)
            }
            let exported = shares.exporting(dryRun ? imported.vault : vault, dryRun: dryRun, folded: imported.pending)
            let pass = zip(imported.outcomes, exported).map { importing, exporting in
                var outcome = importing
                outcome.exported = exporting.exported
                outcome.failure = importing.failure ?? exporting.failure
                if outcome.skipped == nil || outcome.skipped == "no container yet" {
                    outcome.skipped = exporting.skipped ?? (importing.skipped == "no container yet" && !exporting.exported ? importing.skipped : nil)
                }
                return outcome
            }
            outcomes = attempt == 0 ? pass : zip(outcomes, pass).map { earlier, later in
                var outcome = later
                outcome.imported = earlier.imported + later.imported
                outcome.exported = earlier.exported || later.exported
                return outcome
            }
            let changed = ShareSyncError.containerChanged.description
            guard !dryRun, outcomes.contains(where: { $0.skipped?.hasSuffix(changed) == true }) else { break }
        }
        if !dryRun { try? shares.keepSummaries(of: vault) }
        return SharePass(outcomes: outcomes, wroteVault: wroteVault)
    }
}

public import MyPassCore
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
    public func syncShares(dryRun: Bool = false, explaining: SecretFingerprint? = nil) throws -> SharePass {
        let shares = ShareSync(vaultPath: path, state: state)
        let imported = shares.importing(into: vault, explaining: explaining)
        var wroteVault = false
        if !dryRun {
            if imported.outcomes.contains(where: { !$0.imported.isEmpty }) {
                update(imported.vault)
                wroteVault = try saveMerging().wroteFile
            }
            try shares.record(imported.pending)
        }
        let exported = shares.exporting(dryRun ? imported.vault : vault, dryRun: dryRun)
        let outcomes = zip(imported.outcomes, exported).map { importing, exporting in
            var outcome = importing
            outcome.exported = exporting.exported
            outcome.failure = importing.failure ?? exporting.failure
            if outcome.skipped == nil || outcome.skipped == "no container yet" { outcome.skipped = exporting.skipped ?? (importing.skipped == "no container yet" && !exporting.exported ? importing.skipped : nil) }
            return outcome
        }
        return SharePass(outcomes: outcomes, wroteVault: wroteVault)
    }
}

internal import Foundation
internal import SyncFiles
internal import SyncState
package import KDBXFormat
package import MyPassCore
internal import MyPassMerge

/// The one pipeline that writes a merged vault, and its one door, `write` (MergeCommit+Write.swift).
/// Every merge of other versions into a vault ends there: `merge` and the git and Unison drivers
/// (`FileMerge`), `conflicts --merge` and the watcher's folds and restores (`CopyFolding`), remote
/// `sync`, `undo`, and the save of an entry command or of `resolve --merge` that meets a version
/// written meanwhile (`SyncSession.saveMerging` and `resolve`, one-line calls of `write`).
///
/// 1. `merge`: the inputs merged into the session's snapshot one after the other, each against the
///    base that fits it (`Base.fitting`: a remembered base only where both sides descend from it); a
///    key changed on another device, carried by an input opened with its own credentials, is adopted;
/// 2. `write`: **equal content → no write** (decided once, by the session's comparison with the
///    file it read); otherwise verified encoding and the session's compare-and-swap;
/// 3. a version written meanwhile is merged in (against the version the work was made from) and the
///    swap tried again, up to `SyncSession.maximumAttempts` times;
/// 4. the written version recorded as this device's base (the session does, on every save);
/// 5. one journal record, with the bytes the swap replaced as "before" (`journal`, its one site).
///
/// Retiring what was merged (copies, pending versions) is the caller's, after `write` returned:
/// only then is the merged content durably in the vault.
package enum MergeCommit {
    /// The common ancestor a merge uses.
    package enum Base {
        /// None: each entry's ancestor is inferred from history.
        case none
        /// Handed over by the user or the sync engine (`--base`, git's %O, Unison's archive): used for
        /// every input, and certainly common to both sides (an object one side dropped is deleted).
        case given(Vault)
        /// The version this device last synced (or its work was made from): used only where both
        /// sides descend from it (an input older than it would otherwise read as a change back);
        /// not certain either.
        case remembered(Vault)

        /// The base for merging `remote` into `local`.
        package func fitting(_ local: Vault, _ remote: Vault) -> Vault? {
            switch self {
            case .none: nil
            case .given(let base): base
            case .remembered(let base):
                VaultMerger.descends(local, from: base) && VaultMerger.descends(remote, from: base) ? base : nil
            }
        }

        /// Whether the base is certainly common to both sides (docs/merge-rules.md, certain base).
        package var isCertain: Bool {
            if case .given = self { return true }
            return false
        }
    }

    /// One other version to merge in.
    package struct Input {
        /// What it is called in reports and the journal (a path, never a value).
        package let name: String
        /// Its content.
        package let vault: Vault
        /// The SHA-256 (hex) of the bytes it was opened from, for the journal.
        package let sha256: String?
        /// The common ancestor to merge it against.
        package let base: Base
        /// The credentials it was opened with, when they are not the vault's (its key was changed on
        /// another device): a newer key change than the vault's is adopted by the result.
        package let ownKey: AdoptedKey?
        /// The format its file was read in and the base's (nil: not known, the vault's format is kept).
        package let formats: Formats?

        /// The version `vault`, called `name`, opened from bytes hashing to `sha256`, merged against `base`.
        package init(name: String, vault: Vault, sha256: String?, base: Base, ownKey: AdoptedKey? = nil, formats: Formats? = nil) {
            self.name = name
            self.vault = vault
            self.sha256 = sha256
            self.base = base
            self.ownKey = ownKey
            self.formats = formats
        }
    }

    /// The formats an input's cipher, KDF and compression are merged with (MERGE.md rule 13).
    package struct Formats {
        /// The format the input's file was read in.
        package let input: FormatSettings
        /// The format of the base's file, when the base is a file that was read.
        package let base: FormatSettings?

        /// An input read in `input`, its base read in `base`.
        package init(input: FormatSettings, base: FormatSettings?) {
            self.input = input
            self.base = base
        }
    }

    /// A key (with the format and derived key of the version it opened) the result is written with.
    package struct AdoptedKey {
        package let key: CompositeKey
        package let settings: FormatSettings
        package let derivedKey: DerivedKey

        /// The key `key` of a version read in `settings`, deriving to `derivedKey`.
        package init(key: CompositeKey, settings: FormatSettings, derivedKey: DerivedKey) {
            self.key = key
            self.settings = settings
            self.derivedKey = derivedKey
        }
    }

    /// What one input brought.
    package struct Step {
        /// The input's name.
        package let source: String
        /// What it changed in the snapshot.
        package var changes: [Change]
        /// What the merge noticed without stopping (trimmed history, a rotated key).
        package var warnings: [String]
        /// Whether the input changed the snapshot's content (false: everything it holds was there already).
        package let newContent: Bool
        /// How each property the two differed on was decided.
        package var decisions: [FieldDecision]
    }

    /// The inputs merged in memory.
    package struct Merged {
        /// The snapshot with every input merged in.
        package let vault: Vault
        /// What each input brought, in order.
        package let steps: [Step]
        /// The inputs, in order.
        package let inputs: [Input]
        /// The key the result is written with when an input carried a newer one.
        package let adoptedKey: AdoptedKey?
        /// The cipher, KDF and compression the result is written with when they are not the vault's
        /// own (an input changed them: MERGE.md rule 13).
        package let format: FormatSettings?

        /// `vault`, the merge of `inputs`, which brought `steps`.
        package init(vault: Vault, steps: [Step], inputs: [Input], adoptedKey: AdoptedKey? = nil, format: FormatSettings? = nil) {
            self.vault = vault
            self.steps = steps
            self.inputs = inputs
            self.adoptedKey = adoptedKey
            self.format = format
        }

        /// Whether any input changed the snapshot's content.
        package var bringsContent: Bool { steps.contains(where: \.newContent) }
    }

    /// What `write` did.
    package typealias Outcome = SyncSession.MergingSave

    /// `remote` merged into `vault` against the base that fits them, explained (no I/O).
    package static func merge(_ remote: Vault, from source: String, into vault: Vault, base: Base) throws -> (vault: Vault, step: Step) {
        try merge(remote, from: source, into: vault, fittedBase: base.fitting(vault, remote), baseIsCertain: base.isCertain)
    }

    /// `remote` merged into `vault` against `fittedBase` (what `Base.fitting` gave for them).
    private static func merge(
        _ remote: Vault, from source: String, into vault: Vault, fittedBase: Vault?, baseIsCertain: Bool
    ) throws -> (vault: Vault, step: Step) {
        let result = try VaultMerger.merge(base: fittedBase, baseIsCertain: baseIsCertain, local: vault, remote: remote,
                                           explaining: try SecretFingerprint.forOneMerge()) { DeferredRelease.dropTables($0) }
        // Content, not form: a version that differs only in access times or field order brings nothing.
        let newContent = !VaultDiff.sameContent(vault, result.vault)
        return (result.vault, Step(source: source, changes: result.changes, warnings: result.warnings, newContent: newContent,
                                   decisions: result.decisions))
    }

    /// `inputs` merged one after the other into `vault` (no I/O). An input opened with its own key
    /// whose key change is newer than the vault's (and any earlier such input's) makes the result
    /// carry that key change and be written with that key (docs/merge-rules.md, rotated keys).
    /// `format`: the format the vault's file was read in; with it, each input's cipher, KDF and
    /// compression are merged in too (`FormatMerge`), and `Merged.format` says what to write.
    package static func merge(_ inputs: [Input], into vault: Vault, format: FormatSettings? = nil) throws -> Merged {
        var merged = vault
        var steps: [Step] = []
        var adopted: (input: Input, key: AdoptedKey)?
        var written = format
        let never = Timestamp(secondsSinceYearOne: 0)
        for input in inputs {
            // Once per input: whether a remembered base fits walks both vaults.
            let fittedBase = input.base.fitting(merged, input.vault)
            let formatStep = written.flatMap { current in
                input.formats.map { formats in
                    // The base's format only where the base itself is used for this input.
                    FormatMerge.merge(ancestor: fittedBase.flatMap { base in
                                          formats.base.map { .init(settings: $0, settingsChanged: base.meta.settingsChanged) } },
                                      local: .init(settings: current, meta: merged.meta),
                                      remote: .init(settings: formats.input, meta: input.vault.meta))
                }
            }
            var (result, step) = try merge(input.vault, from: input.name, into: merged, fittedBase: fittedBase,
                                           baseIsCertain: input.base.isCertain)
            if let formatStep {
                step.record(formatStep, title: result.meta.databaseName)
                written = formatStep.settings
                result.meta.stampSettings(formatStep)
            }
            if let ownKey = input.ownKey,
               (input.vault.meta.masterKeyChanged ?? never) > ((adopted?.input.vault ?? vault).meta.masterKeyChanged ?? never) {
                adopted = (input, ownKey)
                step.warnings.append("the master key was changed on another device; the merged vault is written with that key")
            }
            merged = result
            steps.append(step)
        }
        if let rotated = adopted?.input.vault.meta {
            merged.meta.masterKeyChanged = rotated.masterKeyChanged
            merged.meta.masterKeyChangeRecommended = rotated.masterKeyChangeRecommended
            merged.meta.masterKeyChangeForced = rotated.masterKeyChangeForced
        }
        return Merged(vault: merged, steps: steps, inputs: inputs, adoptedKey: adopted?.key,
                      format: written.flatMap { FormatMerge.sameChoice($0, format) ? nil : $0 })
    }
}

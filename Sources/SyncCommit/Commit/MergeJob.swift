internal import Foundation
internal import SyncFiles
public import SyncState
internal import KDBXFormat
public import MyPassCore
internal import MyPassMerge

/// Merges other versions of a vault (remotes, sync-conflict copies, the disk version of a save
/// conflict) into it, one after the other, and saves once: `merge`, `conflicts --merge`, the watcher
/// and `resolve --merge` all merge here.
public enum MergeJob {
    /// The common ancestor a merge uses.
    package enum Base {
        /// None: each entry's ancestor is inferred from history.
        case none
        /// Handed over by the user or the sync engine (`--base`, git's %O, Unison's archive): used for
        /// every copy, and certainly common to both sides (an object one side dropped is deleted).
        case given(Vault)
        /// The version this device last synced: used only where both sides descend from it (a copy
        /// older than it would otherwise read as a change back); not certain either.
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

        /// Whether the base is certainly common to both sides (MERGE.md rule 6).
        package var isCertain: Bool {
            if case .given = self { return true }
            return false
        }
    }

    /// One copy merged in.
    package struct Step {
        package let source: String
        package let changes: [Change]
        package let warnings: [String]
        /// Whether the copy changed the vault (false: everything it holds was there already).
        package let newContent: Bool
        /// How each property the two differed on was decided.
        package let decisions: [FieldDecision]
    }

    /// `vault` with `remote` merged in against `base`, explained.
    package static func merge(_ remote: Vault, from source: String, into vault: Vault, base: Base) throws -> (vault: Vault, step: Step) {
        let result = try VaultMerger.merge(base: base.fitting(vault, remote), baseIsCertain: base.isCertain, local: vault, remote: remote,
                                           explaining: try SecretFingerprint.forOneMerge()) { DeferredRelease.drop($0) }
        // Content, not form: a version that differs only in access times or field order brings nothing.
        let newContent = !VaultDiff.sameContent(vault, result.vault)
        return (result.vault, Step(source: source, changes: result.changes, warnings: result.warnings, newContent: newContent,
                                   decisions: result.decisions))
    }

    /// A phase of `run`.
    public enum Phase: Sendable, CustomStringConvertible {
        /// Deriving the key and reading the vault and `copies` copies.
        case opening(copies: Int)
        /// Merging copy `index` (from 1) of `count`.
        case merging(copy: String, index: Int, count: Int)
        /// Writing the result and verifying it by opening it again.
        case saving(path: String)

        public var description: String {
            switch self {
            case .opening(let copies): "opening the vault and \(copies) cop\(copies == 1 ? "y" : "ies"): deriving the key, decrypting, parsing…"
            case .merging(let copy, let index, let count): "merging \((copy as NSString).lastPathComponent) (\(index) of \(count))…"
            case .saving(let path): "saving \((path as NSString).lastPathComponent) and verifying it…"
            }
        }
    }

    /// What `run` is asked to do.
    public struct Request: Sendable {
        /// The other versions to merge in, in order.
        public var copies: [String]
        /// Their credentials when they differ from the vault's (a key changed on another device).
        public var copyCredentials: VaultCredentials?
        /// The common version (else the one this device last synced, else inferred per entry).
        public var basePath: String?
        /// Write the result here instead of replacing the vault.
        public var outputPath: String?
        /// Merge in memory only; write nothing.
        public var dryRun = false
        /// Keep the replaced version as `<vault>.bak`.
        public var keepsBackup = false
        /// This device's sync state (the remembered base; the new base after the save).
        public var state: SyncStateStore
        /// This device's settings (backups, KDF salt rotation), read once by the caller.
        public var settings = DeviceSettings()
        /// Told each phase as it starts (for a progress line: big vaults take seconds).
        public var progress: (@Sendable (Phase) -> Void)?

        /// A request to merge `copies` with this device's `state`.
        public init(copies: [String], state: SyncStateStore) {
            self.copies = copies
            self.state = state
        }
    }

    /// Opens the vault read as `file` and the request's copies (in parallel), merges the copies in
    /// and writes the result once: to `outputPath`, or over the vault by compare-and-swap (a change
    /// made meanwhile is merged in too), and only when the merge changed something. A copy whose
    /// master key changed after the vault's, opened with its own credentials, makes the result use
    /// that key (MERGE.md rule 13); one that does not open with the credentials stops the merge.
    public static func run(_ request: Request, on file: VaultFile, credentials: VaultCredentials) throws -> MergeReport {
        request.progress?(.opening(copies: request.copies.count))
        let (unlocked, opened) = try file.unlock(credentials, withCopies: request.copies, copyCredentials: request.copyCredentials)
        let base: Base
        if let basePath = request.basePath {
            let given = try unlocked.openCopy(atPath: basePath).vault
            guard DatabaseIdentity(given) == DatabaseIdentity(unlocked.vault) else { throw MergeRefusal.baseOfAnotherDatabase(basePath) }
            base = .given(given)
        } else if let remembered = unlocked.rememberedBase(in: request.state) {
            base = .remembered(remembered)
        } else {
            base = .none
        }
        var report = MergeReport()
        var rotated: VaultCopy?
        var inputs: [MergeCommit.Input] = []
        for (path, result) in zip(request.copies, opened) {
            let copy: VaultCopy
            switch result {
            case .success(let value): copy = value
            case .failure(.wrongCredentials): throw MergeRefusal.keyRotated(path)
            case .failure(let error): throw error
            }
            inputs.append(MergeCommit.Input(name: path, vault: copy.vault, sha256: copy.bytesSHA256, base: base))
            let never = Timestamp(secondsSinceYearOne: 0)
            let localKeyChanged = (rotated?.vault ?? unlocked.vault).meta.masterKeyChanged ?? never
            if request.copyCredentials != nil && (copy.vault.meta.masterKeyChanged ?? never) > localKeyChanged { rotated = copy }
        }
        for (index, input) in inputs.enumerated() {
            request.progress?(.merging(copy: input.name, index: index + 1, count: inputs.count))
        }
        let merged = try MergeCommit.merge(inputs, into: unlocked.vault)
        var vault = merged.vault
        report.sections = merged.steps.map { .init(remote: $0.source, changes: $0.changes, warnings: $0.warnings, explanation: $0.decisions) }
        if let rotated {
            vault.meta.masterKeyChanged = rotated.vault.meta.masterKeyChanged
            vault.meta.masterKeyChangeRecommended = rotated.vault.meta.masterKeyChangeRecommended
            vault.meta.masterKeyChangeForced = rotated.vault.meta.masterKeyChangeForced
            report.sections[report.sections.count - 1].warnings.append(
                "the master key was changed on another device; the merged vault is written with that key")
        }
        report.dryRun = request.dryRun
        let changed = report.hasChanges || rotated != nil
        if !request.dryRun {
            if request.outputPath != nil || changed { request.progress?(.saving(path: request.outputPath ?? file.path)) }
            if let outputPath = request.outputPath {
                let writer = rotated.map { UnlockedVault(file: file, opened: $0.opened, credentials: $0.credentials) } ?? unlocked
                try writer.writeVerified(vault, toPath: outputPath)
                report.written = outputPath
            } else if changed {
                let session = try unlocked.session(state: request.state, keepsBackup: request.keepsBackup, settings: request.settings)
                if let rotated { session.adoptCredentials(key: rotated.credentials.key, settings: rotated.opened.settings, derivedKey: rotated.opened.derivedKey) }
                let outcome = try MergeCommit.commit(MergeCommit.Merged(vault: vault, steps: merged.steps, inputs: inputs), through: session,
                                                     journal: .merge)
                if !outcome.mergedFromDisk.isEmpty {
                    report.sections.append(.init(remote: file.path + " (changed during the merge)", changes: outcome.mergedFromDisk, warnings: [],
                                                 explanation: []))
                }
                report.written = outcome.wroteFile ? file.path : nil
                report.warnings = session.warnings
            }
        }
        report.unchanged = !report.dryRun && report.written == nil
        return report
    }
}

/// Why a merge stops without writing.
public enum MergeRefusal: Error, CustomStringConvertible {
    /// A copy does not open with the known credentials: its key was changed on another device.
    case keyRotated(String)
    /// The base given is a version of another database: no ancestor of these versions.
    case baseOfAnotherDatabase(String)

    /// The refusal in one sentence (paths, never values).
    public var description: String {
        switch self {
        case .keyRotated(let path):
            "\(path) does not open with these credentials (its key was probably changed on another device); nothing was written"
        case .baseOfAnotherDatabase(let path):
            "the base \(path) is another database (its root group differs), not an ancestor of these versions; nothing was written"
        }
    }
}

/// What a merge did, as `merge` prints it (`--json`: schema 1).
public struct MergeReport: Sendable, Encodable {
    /// What one copy brought.
    public struct Section: Sendable, Encodable {
        /// The copy merged in.
        public let remote: String
        /// What it changed in the vault.
        public let changes: [Change]
        /// What the merge noticed without stopping (a rotated key, trimmed history).
        public var warnings: [String]
        /// How each property the vault and the copy differed on was decided, and by which rule.
        public let explanation: [FieldDecision]
    }

    /// The version of this JSON document's layout.
    public let schema = 1
    /// One section per copy, in merge order.
    public internal(set) var sections: [Section] = []
    /// Where the result was written (nil: nowhere).
    public internal(set) var written: String?
    /// Whether nothing was meant to be written.
    public internal(set) var dryRun = false
    /// Nothing to write: the merged content is what the vault already holds (the file is untouched).
    public internal(set) var unchanged = false
    /// Problems that did not stop the merge (not part of the JSON document).
    public internal(set) var warnings: [String] = []

    private enum CodingKeys: String, CodingKey { case schema, sections, written, dryRun, unchanged }

    /// Whether any copy changed the vault.
    public var hasChanges: Bool { sections.contains { !$0.changes.isEmpty } }
}

extension MergeRefusal: RemediableFailure {
    /// A copy whose key changed opens with its own credentials.
    public var remedy: Remedy? {
        switch self {
        case .keyRotated: .otherVersionsCredentials
        case .baseOfAnotherDatabase: nil
        }
    }
}

internal import Foundation
internal import SyncFiles
public import SyncState
internal import KDBXFormat
public import MyPassCore
internal import MyPassMerge

/// Merges other version files of a vault (sync-conflict copies, remotes, git's and Unison's
/// versions) into the vault file, one after the other, and saves once through the merge pipeline
/// (`MergeCommit`): what `merge` and the git and Unison drivers run.
public enum FileMerge {
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
            case .merging(let copy, let index, let count): "merging \(PathText.name(of: copy)) (\(index) of \(count))…"
            case .saving(let path): "saving \(PathText.name(of: path)) and verifying it…"
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
        public var settings: DeviceSettings
        /// Told each phase as it starts (for a progress line: big vaults take seconds).
        public var progress: (@Sendable (Phase) -> Void)?

        /// A request to merge `copies` with this device's `state` and `settings`.
        public init(copies: [String], state: SyncStateStore, settings: DeviceSettings) {
            self.copies = copies
            self.state = state
            self.settings = settings
        }
    }

    /// Opens the vault read as `file` and the request's copies (in parallel), merges the copies in
    /// and writes the result once: to `outputPath`, or over the vault by compare-and-swap (a change
    /// made meanwhile is merged in too), and only when the merge changed something. A copy whose
    /// master key changed after the vault's, opened with its own credentials, makes the result use
    /// that key (docs/merge-rules.md); one that does not open with the credentials stops the merge.
    public static func run(_ request: Request, on file: VaultFile, credentials: VaultCredentials) throws -> MergeReport {
        request.progress?(.opening(copies: request.copies.count))
        let (unlocked, opened) = try file.unlock(credentials, withCopies: request.copies, copyCredentials: request.copyCredentials)
        let base: MergeCommit.Base
        // The base's format: its file's header (MERGE.md rule 13: the ancestor of the cipher and KDF).
        var baseFormat: FormatSettings?
        if let basePath = request.basePath {
            let copy = try unlocked.openCopy(atPath: basePath)
            guard DatabaseIdentity(copy.vault) == DatabaseIdentity(unlocked.vault) else { throw MergeRefusal.baseOfAnotherDatabase(basePath) }
            base = .given(copy.vault)
            baseFormat = copy.opened.settings
        } else if let remembered = unlocked.rememberedBase(in: request.state) {
            base = .remembered(remembered)
            baseFormat = unlocked.rememberedBaseFormat(in: request.state)
        } else {
            base = .none
        }
        var inputs: [MergeCommit.Input] = []
        for (path, result) in zip(request.copies, opened) {
            switch result {
            case .success(let copy):
                // A copy opened with its own credentials (its key was changed on another device).
                let ownKey = request.copyCredentials.map { _ in
                    MergeCommit.AdoptedKey(key: copy.credentials.key, settings: copy.opened.settings, derivedKey: copy.opened.derivedKey)
                }
                inputs.append(MergeCommit.Input(name: path, vault: copy.vault, sha256: copy.bytesSHA256, base: base, ownKey: ownKey,
                                                formats: MergeCommit.Formats(input: copy.opened.settings, base: baseFormat)))
            case .failure(.wrongCredentials): throw MergeRefusal.keyRotated(path)
            case .failure(let error): throw error
            }
        }
        for (index, input) in inputs.enumerated() {
            request.progress?(.merging(copy: input.name, index: index + 1, count: inputs.count))
        }
        let merged = try MergeCommit.merge(inputs, into: unlocked.vault, format: unlocked.opened.settings)
        var report = MergeReport()
        report.sections = merged.steps.map { .init(remote: $0.source, changes: $0.changes, warnings: $0.warnings, explanation: $0.decisions) }
        report.dryRun = request.dryRun
        if !request.dryRun {
            if let outputPath = request.outputPath {
                request.progress?(.saving(path: outputPath))
                let writer = merged.adoptedKey.map {
                    UnlockedVault(file: file, opened: OpenedVault(vault: unlocked.vault, settings: $0.settings, derivedKey: $0.derivedKey),
                                  credentials: VaultCredentials(key: $0.key))
                } ?? unlocked
                try writer.writeVerified(merged.vault, format: merged.format.map(VaultFormat.init(settings:)), toPath: outputPath)
                report.written = outputPath
            } else {
                if merged.bringsContent || merged.adoptedKey != nil || merged.format != nil { request.progress?(.saving(path: file.path)) }
                let session = try unlocked.session(state: request.state, keepsBackup: request.keepsBackup, settings: request.settings)
                let outcome = try MergeCommit.write(.merged(merged), through: session, journal: .merge)
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

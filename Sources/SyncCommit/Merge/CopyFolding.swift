internal import Foundation
public import SyncFiles
public import SyncState
#if canImport(Glibc)
internal import Glibc
#endif
public import KDBXFormat
public import MyPassCore
internal import MyPassMerge

/// Folds the sync-conflict copies of a vault into it: each copy merged three-way (base: this device's
/// sync state when both sides descend from it, else each entry's ancestor inferred from history), the
/// result saved by compare-and-swap — and only when it differs from what the file already holds: a
/// copy that carries nothing new is retired without touching the vault (two devices rewriting the
/// same merge would make the sync engine produce yet another copy). Each copy merged or found to
/// carry nothing new is then kept on this device outside the synced folder (`RetiredCopies`) and
/// removed from the folder, after the vault is durably saved; the other devices get the deletion and
/// the vault that holds the copy's content. Copies that do not open with the vault's credentials, or
/// are another database, are reported and left where they are.
public enum CopyFolding {
    /// What became of one copy.
    public enum Result: String, Sendable, Encodable {
        /// Merged in: it brought changes.
        case merged
        /// Everything it holds was in the vault already: retired, the vault not written for it.
        case nothingNew
        /// Dry run: would be merged (`changes` says what it brings; none: nothing new).
        case wouldMerge
        /// Does not open with the vault's credentials.
        case otherCredentials
        /// Opens, but is another database (its root group differs).
        case otherDatabase
        /// Not a readable vault (damaged, half written, not a regular file, a symlink).
        case unreadable
        /// Far larger than the vault (`ForeignVersionBudget`): not read.
        case tooLarge
        /// Its KDF (or payload) is beyond the budget for copies (`ForeignVersionBudget`): refused before any derivation.
        case tooCostly
        /// The vault's allowance for opening copies is spent for now (`ForeignWorkAllowance`): left
        /// in the folder, tried again once there is room.
        case deferred
        /// Changed while it was being merged: left in the folder for the next pass.
        case changedMeanwhile
        /// Gone before it was read (the sync engine removed it: another device merged it): nothing
        /// done, and nothing to report or remember.
        case gone
    }

    /// What happened to one copy.
    public struct Outcome: Sendable, Encodable {
        /// The copy's path.
        public let copy: String
        /// The sync engine that named it.
        public let engine: ConflictCopies.Engine
        /// What became of it.
        public let result: Result
        /// What it brought (names and paths, never values).
        public let changes: [Change]
        /// Where the copy is kept on this device now (nil: left in the folder).
        public let movedTo: String?
        /// How each property the vault and the copy differed on was decided (merged copies only).
        public var explanation: [FieldDecision] = []
    }

    /// What one fold did.
    public struct Report: Sendable, Encodable {
        /// What became of each copy.
        public let outcomes: [Outcome]
        /// Whether the vault file was replaced (false: nothing new, or a dry run).
        public let wroteVault: Bool
        /// What the versions merged besides the copies (the watcher's pending versions) brought.
        public var restored: [Change] = []
    }

    /// Merges the copies of the vault `session` holds against `base` (the version this device had
    /// synced before this run; nil: inferred from history); `dryRun` merges in memory only and moves
    /// nothing. Copies that share the vault's KDF salt (written by mypass-sync) reuse `cachedKey`
    /// instead of running the KDF. A copy is read and opened through `ForeignVersion`: a regular file
    /// (a symlink planted under a copy's name could point at a private vault of the same database)
    /// within the vault's `ForeignVersionBudget`.
    public static func fold(
        _ copies: [ConflictCopies.Copy], into session: SyncSession, base: Vault?, key: CompositeKey, cachedKey: DerivedKey? = nil,
        limits: ResourceLimits, dryRun: Bool
    ) throws -> Report {
        try fold(copies, into: session, base: base, key: key, cachedKey: cachedKey, limits: limits, dryRun: dryRun, prefetched: nil)
    }

    /// How a copy of the vault at `vaultPath` on `fileSystem` (KDF `vaultKDF`) is read and opened:
    /// within its `ForeignVersionBudget`.
    package static func copyOpening(
        forVaultAt vaultPath: String, on fileSystem: FileSystem, vaultKDF: KDFParameters, key: CompositeKey, cachedKey: DerivedKey?,
        limits: ResourceLimits
    ) -> CopyPrefetch.Parameters {
        // The vault's size (of the file a symlink the user named leads to).
        let vaultSize = SystemCalls.status(atPath: DurableFile.resolvedPath(vaultPath, on: fileSystem), on: fileSystem).map { Int($0.size) } ?? 0
        return CopyPrefetch.Parameters(key: key, cachedKey: cachedKey, fileSystem: fileSystem,
                                       budget: ForeignVersionBudget(vaultSize: vaultSize, vaultKDF: vaultKDF, within: limits))
    }

    /// `fold`, using the copies `prefetched` opened ahead (the watcher's, during its debounce) where
    /// they were opened from exactly the bytes read now.
    /// `restoring`: other versions merged in the same commit after the copies (the watcher's pending
    /// versions whose content the vault lacks); the journal then calls it a restore when no copy brought anything.
    /// `budget`: the caller's budget for this fold's copies (the watcher's, one per check; nil: measured
    /// against the vault file now).
    package static func fold(
        _ copies: [ConflictCopies.Copy], into session: SyncSession, base: Vault?, key: CompositeKey, cachedKey: DerivedKey?,
        limits: ResourceLimits, dryRun: Bool, prefetched: CopyPrefetch?, restoring: [MergeCommit.Input] = [],
        budget: ForeignVersionBudget? = nil
    ) throws -> Report {
        let opening = budget.map { CopyPrefetch.Parameters(key: key, cachedKey: cachedKey, fileSystem: session.fileSystem, budget: $0) }
            ?? copyOpening(forVaultAt: session.path, on: session.fileSystem, vaultKDF: session.settings.kdf, key: key, cachedKey: cachedKey,
                           limits: limits)
        // Each folder is opened once: reading a copy and removing it later happen in the directory
        // that was opened, even if it is swapped for a symlink meanwhile.
        var folders: [String: DirectoryHandle] = [:]
        func folder(of copy: ConflictCopies.Copy) throws(FileError) -> DirectoryHandle {
            let path = PathText.folder(of: copy.path)
            if let open = folders[path] { return open }
            let opened = try DirectoryHandle.parent(of: copy.path, on: session.fileSystem).directory
            folders[path] = opened
            return opened
        }
        var outcomes: [Outcome] = []
        var readCopies: [(copy: ConflictCopies.Copy, bytes: Data, fingerprint: Fingerprint, opened: OpenedVault)] = []
        let vault = session.vault
        let identity = DatabaseIdentity(vault)
        for copy in copies {
            let directory: DirectoryHandle
            do { directory = try folder(of: copy) } catch {
                outcomes.append(Outcome(copy: copy.path, engine: copy.engine, result: .unreadable, changes: [], movedTo: nil))
                continue
            }
            let result = ForeignVersion.openCopy(copy.name, in: directory, key: key, cachedKey: cachedKey, budget: opening.budget,
                                                  identity: identity, prefetched: prefetched.map { prefetched in
                { prefetched.take(copy.path, matching: $0, under: opening, identity: identity) }
            })
            switch result {
            case .opened(let read): readCopies.append((copy, read.bytes, read.fingerprint, read.opened))
            case .refused(let refusal):
                outcomes.append(Outcome(copy: copy.path, engine: copy.engine, result: Result(refusal), changes: [], movedTo: nil))
            case .gone:
                outcomes.append(Outcome(copy: copy.path, engine: copy.engine, result: .gone, changes: [], movedTo: nil))
            }
        }
        // The base only where both sides descend from it; else each entry's ancestor is inferred.
        // Each copy's cipher, KDF and compression are merged too (MERGE.md rule 13), against the
        // synced version's: a stronger KDF chosen on another device survives its conflict copy.
        let baseFormat = base == nil ? nil : MergeCommit.Formats.rememberedBase(in: session.state, vaultPath: session.path)
        let inputs = readCopies.map {
            MergeCommit.Input(name: $0.copy.path, vault: $0.opened.vault, sha256: $0.fingerprint.sha256, base: base.map { .remembered($0) } ?? .none,
                              formats: MergeCommit.Formats(input: $0.opened.settings, base: baseFormat))
        }
        let merged = try MergeCommit.merge(inputs + restoring, into: vault, format: session.settings)
        let taken = zip(readCopies, merged.steps).map { item, step in
            (copy: item.copy, bytes: item.bytes, fingerprint: item.fingerprint, changes: step.newContent ? step.changes : [],
             newContent: step.newContent, explanation: step.newContent ? step.decisions : [])
        }
        let restored = merged.steps.dropFirst(readCopies.count).flatMap { $0.newContent ? $0.changes : [] }
        DeferredRelease.drop(readCopies.map(\.opened))
        guard !dryRun else {
            let wouldMerge = taken.map {
                Outcome(copy: $0.copy.path, engine: $0.copy.engine, result: .wouldMerge, changes: $0.changes, movedTo: nil, explanation: $0.explanation)
            }
            return Report(outcomes: outcomes + wouldMerge, wroteVault: false, restored: restored)
        }
        let kind: MergeJournal.Kind = taken.contains(where: \.newContent) || restored.isEmpty ? .conflictCopies : .restore
        let wroteVault = try MergeCommit.write(.merged(merged), through: session, journal: kind).wroteFile
        // The vault now durably holds every taken copy's content: keep each copy here, then take it
        // out of the synced folder (unless it changed since it was read: then the next pass has it).
        let retired = RetiredCopies(state: session.state, vaultPath: session.path)
        for item in taken {
            let directory = try folder(of: item.copy)
            let current = try? ForeignVersion.read(item.copy.name, in: directory, budget: opening.budget).fingerprint
            guard let current, current.sameContent(as: item.fingerprint) && current.inode == item.fingerprint.inode else {
                outcomes.append(Outcome(copy: item.copy.path, engine: item.copy.engine, result: .changedMeanwhile, changes: item.changes, movedTo: nil))
                continue
            }
            let kept = try retired.store(item.bytes, originalName: item.copy.name)
            if SystemCalls.unlink(item.copy.name, in: directory) != 0 && errno != ENOENT {
                throw FileReading.error(errno, .removeCopy, item.copy.path)
            }
            outcomes.append(Outcome(copy: item.copy.path, engine: item.copy.engine, result: item.newContent ? .merged : .nothingNew,
                                    changes: item.changes, movedTo: kept, explanation: item.explanation))
        }
        return Report(outcomes: outcomes, wroteVault: wroteVault, restored: wroteVault ? restored : [])
    }
}

extension CopyFolding {
    /// Folds `copies` into the vault `unlocked` holds: merged against the version this device synced
    /// before this run, saved through an editing session (`keepsBackup`, `settings`) by
    /// compare-and-swap; `dryRun` merges in memory only.
    public static func fold(
        _ copies: [ConflictCopies.Copy], into unlocked: UnlockedVault, state: SyncStateStore, keepsBackup: Bool = false,
        settings: DeviceSettings, dryRun: Bool
    ) throws -> Report {
        let base = unlocked.rememberedBase(in: state)  // before the session records the version read
        let session = try unlocked.session(state: state, keepsBackup: keepsBackup, settings: settings)
        return try fold(copies, into: session, base: base, key: unlocked.requireCredentials().key, cachedKey: unlocked.opened.derivedKey,
                        limits: unlocked.file.limits, dryRun: dryRun)
    }
}

extension CopyFolding.Result {
    /// The result for a copy refused for `refusal`.
    public init(_ refusal: ForeignVersion.Refusal) {
        switch refusal {
        case .otherCredentials: self = .otherCredentials
        case .otherDatabase: self = .otherDatabase
        case .unreadable: self = .unreadable
        case .tooLarge: self = .tooLarge
        case .tooCostly: self = .tooCostly
        case .deferred: self = .deferred
        }
    }

    /// Why the copy was refused, when it was.
    public var refusal: ForeignVersion.Refusal? { ForeignVersion.Refusal(rawValue: rawValue) }
}

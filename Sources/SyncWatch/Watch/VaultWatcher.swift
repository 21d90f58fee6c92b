package import Foundation
internal import Synchronization
public import SyncFiles
public import SyncState
public import SyncCommit
public import KDBXFormat
internal import MyPassCore
internal import MyPassMerge
internal import MyPassCrypto

/// Keeps one vault in step with its file: notices external changes (by fingerprint), takes them in
/// as the new base, folds sync-conflict copies in, recognises its own writes, waits for a vault that
/// disappeared, retries a file that does not parse yet, and reports a rollback or a different
/// database instead of taking it.
///
/// Confined to one thread (the engine's), so not `Sendable`; only `prepare(copyAt:)` is called from
/// the file-event thread, and it touches nothing but the lock-guarded copy opening and the
/// prefetch cache, which has its own lock.
public final class VaultWatcher {
    /// What to do when the file changed on disk.
    public enum Policy: String, Sendable, CaseIterable { case merge, reload, ask }
    /// What to do with sync-conflict copies.
    public enum CopyPolicy: String, Sendable, CaseIterable { case merge, report, ignore }

    /// The vault watched, with its key, limits, state and the device's settings.
    private let context: VaultContext
    /// The vault watched (resolved path).
    public var path: String { context.path }
    private var key: CompositeKey { context.key }
    private var state: SyncStateStore { context.state }
    private var limits: ResourceLimits { context.limits }
    /// The file system the vault is on.
    public var fileSystem: FileSystem { context.fileSystem }
    /// The rules the reconciler applies.
    private let reconcilerPolicy: Reconciler.Policy
    private var copyPolicy: CopyPolicy { reconcilerPolicy.copies }
    private let emit: @Sendable (WatchEvent) -> Void
    /// The time checks decide at.
    private let clock: any WatchClock
    /// What the reconciler keeps between checks.
    private var memory = Reconciler.Memory()
    /// The last derived key: a reload of a file whose KDF settings and salt are unchanged (what this
    /// project writes) costs no KDF run; a new salt (KeePassXC draws one per save) costs one.
    private var cachedKey: DerivedKey?
    /// The versions in use (the base, the disk version, the pending ones) as opened, by the SHA-256 of
    /// their bytes: a check after a change elsewhere does not parse them again.
    private var openedVersions: [String: OpenedVault] = [:]
    /// Copies beside the vault whose bytes are among the pending versions: path -> SHA-256.
    private var copiesPending: [String: String] = [:]
    /// The vault's file identity last written to `SeenVaultFiles`.
    private var notedVaultFile: FileIdentity?
    /// The budget for versions from elsewhere in the check in progress, computed once from its
    /// snapshot (`check`), so that every step of one check holds them to the same caps.
    private var budget = ForeignVersionBudget.withoutReference(within: .standard)
    /// The key derived for each vault header seen (by its KDF's fingerprint): never derived twice.
    private var vaultKeys: [Data: DerivedKey] = [:]
    /// The time this vault may spend opening versions from elsewhere (copies, the rollback evidence,
    /// a rebuild candidate, copies opened ahead), counted across them and over time.
    package let allowance: ForeignWorkAllowance
    /// A sync engine's transfer into the folder was reported and is still awaited.
    public var waitingForTransfer: Bool { Reconciler.awaitsTransfer(memory) }

    /// `foreignCopyGrace`: a sync engine makes a conflict copy on one device (by renaming that
    /// device's version aside) and ships it to the others. If every device merged it at once, each
    /// would write the same merge as a new version at the same moment, and the engine would make one
    /// more copy of those. So a copy that arrived from elsewhere is left for this long to the device
    /// that made it: usually that device's merged vault arrives and the copy's deletion follows, and
    /// nothing is left to do here. After the grace (that device may run no watcher) it is merged here.
    /// `rollbackHold`: how long a version that looks like a rollback is held before it is refused,
    /// waiting for the conflict copy with this device's newer version (0: refused at once).
    /// `clock`: the time `check()` decides at (graces, holds).
    public init(context: VaultContext, policy: Reconciler.Policy, clock: any WatchClock = SystemClock(),
                allowance: ForeignWorkAllowance = ForeignWorkAllowance(), emit: @escaping @Sendable (WatchEvent) -> Void) {
        self.context = context
        self.allowance = allowance
        self.clock = clock
        self.reconcilerPolicy = policy
        self.emit = emit
        // The files the vault was in earlier runs: a copy that is one of them is this device's own.
        let seenFiles = SeenVaultFiles(state: context.state, vaultPath: context.path).list()
        // Copies an earlier run could not merge: not opened again while they are unchanged.
        let failed = FailedCopies(state: context.state, vaultPath: context.path).load().compactMap { copyPath, failure -> (copy: CopyFile, reason: ForeignVersion.Refusal)? in
            guard let engine = ConflictCopies.engine(ofName: PathText.name(of: copyPath),
                                                     forVaultNamed: PathText.name(of: context.path),
                                                     naming: context.settings.copyNaming) else { return nil }
            return (CopyFile(path: copyPath, engine: engine, inode: failure.inode, size: failure.size, modified: failure.modified),
                    ForeignVersion.Refusal(rawValue: failure.reason) ?? .unreadable)
        }
        memory = Reconciler.Memory(vaultFiles: seenFiles, failedCopies: failed)
        notedVaultFile = seenFiles.last
        savedFailures = memory.failedCopies
    }

    /// The failed copies as last remembered in the state directory.
    private var savedFailures: [String: CopyFile] = [:]

    /// Remembers the failed copies in the state directory when they changed.
    private func saveFailedCopies() {
        guard memory.failedCopies != savedFailures else { return }
        savedFailures = memory.failedCopies
        FailedCopies(state: state, vaultPath: path).save(memory.failedCopies.mapValues {
            FailedCopies.Failure(inode: $0.inode, size: $0.size, modified: $0.modified, reason: memory.failure(of: $0.path).rawValue)
        })
    }

    /// A watcher of the vault at `path` with the device's `settings` (tests, benchmarks).
    public convenience init(
        path: String, key: CompositeKey, state: SyncStateStore, limits: ResourceLimits, settings: DeviceSettings, policy: Policy, copyPolicy: CopyPolicy,
        foreignCopyGrace: Double = 0, rollbackHold: Double = 0, emit: @escaping @Sendable (WatchEvent) -> Void
    ) {
        self.init(context: VaultContext(path: path, key: key, limits: limits, state: state, settings: settings),
                  policy: Reconciler.Policy(vault: policy, copies: copyPolicy, foreignCopyGrace: foreignCopyGrace, rollbackHold: rollbackHold),
                  emit: emit)
    }

    /// The file that stands for the vault at `path` when credentials are checked before watching:
    /// the vault, or while it is missing because a sync engine renamed both versions aside (rclone
    /// bisync), the first of those copies (same database, same credentials).
    public static func standIn(for path: String, on fileSystem: FileSystem, naming: ConflictCopies.Naming) -> String {
        guard SystemCalls.status(atPath: path, on: fileSystem) == nil else { return path }
        return ConflictCopies.find(for: path, on: fileSystem, naming: naming).filter(\.engine.renamesBothVersions).map(\.path).sorted().first ?? path
    }

    /// The part of this watcher the file-event thread uses.
    public let copyArrivals = CopyArrivals()
    /// Copies opened during the debounce (`prepare(copyAt:)`), for the next check.
    package var prefetch: CopyPrefetch { copyArrivals.prefetch }

    /// A conflict copy appeared at `copyPath`: start opening it now, so that the check after the
    /// debounce finds it open (only with the merge policy, and only once the vault is known).
    public func prepare(copyAt copyPath: String) {
        guard copyPolicy == .merge else { return }
        copyArrivals.prepare(copyAt: copyPath)
    }

    /// Keeps how copies of the vault file read now (`bytes`, inode `inode`) are opened, for `prepare`.
    private func rememberCopyOpening(for bytes: Data, inode: UInt64, budget: ForeignVersionBudget) {
        var opening = CopyPrefetch.Parameters(key: key, cachedKey: cachedKey, fileSystem: fileSystem, budget: budget)
        // Which arriving copies are kept as pending versions is the Reconciler's rule.
        opening.pendingVersions = PendingVersions(state: state, vaultPath: path)
        opening.keepsPending = Reconciler.keepsPendingOnArrival(policy: reconcilerPolicy, memory: memory, vaultInode: inode)
        copyArrivals.set(opening)
    }

    /// Whether the last `check` failed (an error or an unreadable file, not a wait): the caller backs
    /// off before the next one.
    public private(set) var failedLastCheck = false
    /// The last check's listing held copies neither refused and told nor reported (`VaultChecking`).
    public private(set) var copiesOutstanding = false
    /// The last check put copies off until the vault's allowance has room again (`VaultChecking`).
    package private(set) var retryNotBefore: Date?
    private func report(_ event: WatchEvent, oncePerCopy copy: String? = nil) {
        if event.kind.isProblem { failedLastCheck = true }
        if Reconciler.tells(event, oncePerCopy: copy, memory: &memory) { emit(event) }
    }

    /// One pass over the vault's folder: one listing (`FolderSnapshot`), the versions it needs opened,
    /// the `Reconciler`'s plan and its effects (`Reconciler.check`), and the effects executed in order
    /// (through `MergeCommit` when it merges; what a fold did goes back to `Reconciler.settle`).
    /// Returns false when the pass should be retried later (a transfer, a missing or half-written
    /// vault, a rollback held, a copy in its grace, a failure).
    @discardableResult
    public func check() -> Bool {
        check(now: clock.now)
    }

    /// `check` at the time `now` (tests that drive the watcher step by step pass it).
    func check(now: Date) -> Bool {
        check(now: now, mayRebuild: true, decision: nil).succeeded
    }

    /// One pass that carries out a person's `decision` (handed to the plan of this check only), and
    /// its answer, made from how the check ended.
    package func check(deciding decision: Reconciler.Decision) -> (succeeded: Bool, answer: WatcherDecision.Answer) {
        let ending = check(now: clock.now, mayRebuild: true, decision: decision)
        return (ending.succeeded, WatcherDecision.answer(ending, to: decision, vault: path))
    }

    private func check(now: Date, mayRebuild: Bool, decision: Reconciler.Decision?) -> CheckEnding {
        let ending = checkVault(now: now, mayRebuild: mayRebuild, decision: decision)
        guard ending.succeeded, !keepSharesInStep() else { return ending }
        // A container waits for the vault's allowance: tried again once it has room.
        retryNotBefore = clock.now.addingTimeInterval(allowance.nextRoom(at: Date()).timeIntervalSinceNow)
        return .waiting("a shared group's container waits for the time allowed for versions from elsewhere")
    }

    /// The resolved containers of the vault's acting shared groups (KeeShare), as the last check
    /// found them: the engine watches their folders too.
    public private(set) var containerPaths: [String] = []
    /// The last reason told for each shared group that does nothing (told again only when it changes).
    private var shareIdleTold: [UUID: String] = [:]

    /// Once the vault is in step with its folder: its shared groups with their containers
    /// (`SyncSession.syncShares`: imports merged in and saved through the one merge door, then the
    /// containers written by compare-and-swap). The vault written is remembered as this watcher's own.
    /// Returns false when a container waits for the vault's allowance (the check is retried then).
    private func keepSharesInStep() -> Bool {
        guard let record = state.base(for: path), let opened = openedVersions[record.record.fingerprint.sha256] else { return true }
        guard !opened.vault.sharedGroups.isEmpty else {
            containerPaths = []
            return true
        }
        guard (try? DurableFile.fingerprint(atPath: path, on: fileSystem))?.sameContent(as: record.record.fingerprint) == true else { return true }
        do {
            let session = try SyncSession(context: context, onDisk: opened, bytes: record.bytes, fingerprint: record.record.fingerprint)
            let pass = try session.syncShares(copyNaming: context.settings.copyNaming, allowance: allowance)
            if pass.wroteVault {
                Reconciler.wrote(session.fingerprint, in: &memory)
                openedVersions[session.fingerprint.sha256] = session.opened
            }
            for outcome in pass.outcomes {
                if !outcome.imported.isEmpty || outcome.exported {
                    shareIdleTold[outcome.group] = nil
                    report(.shareSynced(vault: path, group: outcome.groupPath, changes: outcome.imported, exported: outcome.exported))
                } else if let digest = outcome.awaitingApproval {
                    guard shareIdleTold[outcome.group] != digest else { continue }
                    shareIdleTold[outcome.group] = digest
                    report(.shareAwaitsApproval(vault: path, group: outcome.groupPath, groupID: outcome.group, reference: digest))
                } else if let reason = outcome.skipped, shareIdleTold[outcome.group] != reason {
                    shareIdleTold[outcome.group] = reason
                    report(.shareIdle(vault: path, group: outcome.groupPath, reason: reason))
                }
            }
            containerPaths = ShareSync(vaultPath: path, state: state).shares(of: session.vault).filter(\.acts).compactMap(\.containerPath)
            return !pass.outcomes.contains(where: \.deferred)
        } catch SaveError.changedOnDisk {
            return true  // the vault changed meanwhile: its event brings the next check, and this pass with it
        } catch {
            report(.error(vault: path, message: "shared groups: \(error)"))
            return true
        }
    }

    private func checkVault(now: Date, mayRebuild: Bool, decision: Reconciler.Decision?) -> CheckEnding {
        failedLastCheck = false
        retryNotBefore = nil
        // The version this device synced measures how large the vault file may be to be read at all:
        // the budget for versions from elsewhere, and at least 256 MiB (an attachment added elsewhere
        // grows a small vault many times over).
        let record = state.base(for: path)
        let synced = record.map { foreignBudget(measuredAgainst: $0.bytes) }
        let vaultSizeLimit = synced.map { max($0.sizeLimit, 256 << 20) } ?? FileReading.maximumSize
        let (snapshot, bytes) = FolderSnapshot.take(of: path, on: fileSystem, naming: context.settings.copyNaming, vaultSizeLimit: vaultSizeLimit)
        // One budget for every version from elsewhere this check reads (the rollback evidence, the
        // copies folded and opened ahead, a rebuild candidate): measured against the version this
        // device synced, else the vault file this check read.
        budget = synced ?? foreignBudget(measuredAgainst: bytes)
        // Only a check that planned the copies can leave one behind: one that stopped for a person's
        // decision, a changed key or a refusal has said why, and is not made again for the copies.
        copiesOutstanding = false
        var plannedCopies = false
        defer { copiesOutstanding = plannedCopies && Reconciler.copiesOutstanding(snapshot.copies, memory: memory, policy: reconcilerPolicy) }
        // The versions at hand, opened when the vault is there (nothing to open for a transfer, a
        // failed read or a missing vault: the plan decides from the listing alone).
        var versions = Reconciler.Versions(base: nil, disk: nil)
        var copyHoldsNewer = false
        var present: (fingerprint: Fingerprint, bytes: Data)?
        if snapshot.transfers.isEmpty, case .present(let fingerprint) = snapshot.vault, let bytes {
            present = (fingerprint, bytes)
            switch gather(snapshot, fingerprint: fingerprint, bytes: bytes, record: record, decision: decision) {
            case .ended(let ending): return ending
            case .versions(let opened, let evidence):
                versions = opened
                copyHoldsNewer = evidence
            }
        }
        // The one decision of this check, with the effects that carry it out.
        let decided = Reconciler.check(snapshot, vault: path, versions: versions, memory: &memory, now: now, policy: reconcilerPolicy,
                                       copyHoldsNewer: copyHoldsNewer, decision: decision, mayRebuild: mayRebuild)
        guard let (fingerprint, bytes) = present else { return withoutVault(decided, now: now, decision: decision) }
        noteVaultFile()
        if case .reconcile(let reconciliation) = decided.plan {
            plannedCopies = true
            return .reconciled(carryOut(decided.effects, of: reconciliation, versions: versions, bytes: bytes, fingerprint: fingerprint))
        }
        for effect in decided.effects {
            if case .overwrite(let base) = effect { return overwrite(fingerprint, bytes: bytes, with: base) }
            tell(effect)
        }
        switch decided.plan {
        case .wait(.rollbackHold): return .waiting("held for the conflict copy with this device's newer versions")
        case .refuse(let problem): return .refused(problem)
        case .ask: return .asked(fingerprint.sha256)
        case .noOwnVersion: return .noOwnVersion
        default: return .waiting("the vault is not readable now")  // transfers, a missing or failed vault: planned without opening
        }
    }

    /// What gathering a check's versions gave: the versions opened and the rollback evidence, or the
    /// check's end (the vault no longer opens with this key, or does not parse yet).
    private enum Gathered {
        case versions(Reconciler.Versions, copyHoldsNewer: Bool)
        case ended(CheckEnding)
    }

    /// Opens the versions a check of the vault read as `bytes` needs (the base, the disk version when
    /// it differs, the pending ones), frees those no longer in use, and gathers the rollback evidence
    /// when `Reconciler.needsRollbackEvidence` says so.
    private func gather(_ snapshot: FolderSnapshot, fingerprint: Fingerprint, bytes: Data, record: (record: SyncStateStore.Record, bytes: Data)?,
                        decision: Reconciler.Decision?) -> Gathered {
        for effect in Reconciler.vaultPresent(path, memory: &memory) { tell(effect) }
        rememberCopyOpening(for: bytes, inode: fingerprint.inode, budget: budget)
        var versions = Reconciler.Versions(base: nil, disk: nil)
        if let record { versions.base = version(record.bytes, sha256: record.record.fingerprint.sha256) }
        if record?.record.fingerprint.sameContent(as: fingerprint) != true {
            do {
                let opened = try openVaultFile(bytes, baseBytes: record?.bytes, budget: budget, decided: decision != nil)
                cachedKey = opened.derivedKey
                openedVersions[fingerprint.sha256] = opened
                versions.disk = Reconciler.Version(sha256: fingerprint.sha256, vault: opened.vault)
            } catch KDBXError.wrongCredentials {
                report(.keyChanged(vault: path))
                return .ended(.keyChanged)
            } catch {
                report(.unreadable(vault: path, reason: "\(error)"))
                return .ended(.unreadable("\(error)"))
            }
        }
        let pending = PendingVersions(state: state, vaultPath: path)
        // A kept version that is still beside the vault as a copy is the copy's business (folded,
        // then retired here): not opened and merged a second time.
        let kept = pending.list()
        copiesPending = kept.isEmpty ? [:] : copiesHeld(in: kept, copies: snapshot.copies, budget: budget)
        for kept in kept where !copiesPending.values.contains(kept.sha256) {
            // Gone, or no longer opening with this key (changed since): the Reconciler retires it. A
            // read or open that failed for another reason (an I/O error, a resource cap) leaves it
            // kept, tried again at the next check: never deleted for a passing error.
            switch pending.read(kept) {
            case .gone:
                versions.unopenable.append(kept.sha256)
            case .unreadable:
                continue
            case .bytes(let bytes):
                switch Result(catching: { try openedVersion(bytes, sha256: kept.sha256) }) {
                case .success(let opened): versions.pending.append(opened)
                case .failure(KDBXError.wrongCredentials): versions.unopenable.append(kept.sha256)
                case .failure: continue
                }
            }
        }
        // Versions no longer in use are freed off this thread (tens of thousands of objects each).
        let inUse = Set([fingerprint.sha256] + [versions.base?.sha256].compactMap { $0 } + versions.pending.map(\.sha256))
        for (sha256, opened) in openedVersions where !inUse.contains(sha256) {
            openedVersions[sha256] = nil
            DeferredRelease.drop(opened)
        }
        // The rollback evidence, gathered before planning: copies that failed before are not opened,
        // ones refused now are remembered as failed.
        var copyHoldsNewer = false
        if Reconciler.needsRollbackEvidence(versions, policy: reconcilerPolicy), let base = versions.base, let disk = versions.disk {
            var refused: [(copy: CopyFile, reason: ForeignVersion.Refusal)] = []
            copyHoldsNewer = copyHoldsNewerVersions(than: disk.vault, base: base.vault,
                                                    copies: snapshot.copies.filter { memory.failedCopies[$0.path] != $0 }, refused: &refused)
            Reconciler.evidenceRefused(refused, memory: &memory)
            if !refused.isEmpty { saveFailedCopies() }
        }
        return .versions(versions, copyHoldsNewer: copyHoldsNewer)
    }

    /// Tells the event of a `tell` effect (other effects are carried out where they belong).
    private func tell(_ effect: Reconciler.Effect) {
        if case .tell(let event, let copy) = effect { report(event, oncePerCopy: copy) }
    }

    /// Keeps the vault's newest file identity in the state, for later runs (`SeenVaultFiles`).
    private func noteVaultFile() {
        guard let newest = memory.vaultFiles.last, newest != notedVaultFile else { return }
        do {
            try SeenVaultFiles(state: state, vaultPath: path).note(newest)
            notedVaultFile = newest
        } catch {
            report(.error(vault: path, message: "the sync state could not be updated: \(error)"))
        }
    }

    /// A check decided from the listing alone (a transfer, a failed read, a missing vault): its
    /// events told, or the vault rebuilt from a copy a sync engine renamed aside, then checked again
    /// (once) to fold the other copies in.
    private func withoutVault(_ decided: Reconciler.Check, now: Date, decision: Reconciler.Decision?) -> CheckEnding {
        for effect in decided.effects {
            guard case .rebuild(let copy) = effect else { tell(effect); continue }
            guard rebuild(from: copy) else { return .waiting("the vault is missing and could not be rebuilt from its copies yet") }
            let after = check(now: now, mayRebuild: false, decision: decision)
            guard case .reconciled(var carried) = after else { return after }
            carried.rebuilt = true
            return .reconciled(carried)
        }
        switch decided.plan {
        case .wait(.transfers): return .transferring
        case .fail(let message): return .failed(message)
        case .wait(.rebuildElsewhere): return .waiting("the vault is missing; the device that renamed it aside rebuilds it")
        default: return .waiting("the vault is missing")
        }
    }

    /// Puts the copy `copy` back as the vault, exactly its bytes, only where no vault is (a vault that
    /// appeared meanwhile wins): it must be a regular file that opens with this key and is this
    /// database, opened through the one copy-opening step (`ForeignVersion.openCopy`) within the
    /// budget measured against the version this device synced. One that fails is left, and not
    /// tried again until it changes.
    private func rebuild(from copy: CopyFile) -> Bool {
        let base = state.base(for: path)
        let identity = base.flatMap { version($0.bytes, sha256: $0.record.fingerprint.sha256) }.map { DatabaseIdentity($0.vault) }
        let read: ForeignVersion.OpenedCopy
        switch ForeignVersion.openCopy(atPath: copy.path, on: fileSystem, key: key, cachedKey: cachedKey, budget: budget,
                                       identity: identity) {
        case .gone: return false  // gone since the listing: the next check sees it
        case .refused(.deferred):
            // Waiting for the allowance is not a failure: tried again once it has room, never remembered.
            retryNotBefore = clock.now.addingTimeInterval(allowance.nextRoom(at: Date()).timeIntervalSinceNow)
            return false
        case .refused(let refusal):
            if Reconciler.refused(copy, for: refusal, in: &memory) {
                report(.conflictCopyLeft(vault: path, copy: copy.path, reason: CopyFolding.Result(refusal)))
            }
            saveFailedCopies()
            return false
        case .opened(let opened): read = opened
        }
        guard read.fingerprint.inode == copy.inode else { return false }  // replaced since the listing: the next check sees it
        cachedKey = read.opened.derivedKey
        do {
            _ = try DurableFile.replace(atPath: path, on: fileSystem, with: read.bytes, policy: .onlyIf(nil))
        } catch SaveError.changedOnDisk {
            if SystemCalls.status(atPath: path, on: fileSystem)?.isSymbolicLink == true {
                report(.error(vault: path, message: "the vault's path is a symlink to a file that is not there; not rebuilt over it"))
            }
            return false  // else a vault is there now: the next check takes it
        } catch {
            report(.error(vault: path, message: "rebuilding the vault from \(copy.path): \(error)"))
            return false
        }
        for effect in Reconciler.rebuilt(path, from: copy, memory: &memory) { tell(effect) }
        return true
    }

    /// The budget for versions from elsewhere measured against `reference` (nil: none to measure
    /// against), counted against the vault's allowance.
    private func foreignBudget(measuredAgainst reference: Data?) -> ForeignVersionBudget {
        ForeignVersionBudget(measuredAgainst: reference, within: limits).metered(by: allowance)
    }

    /// The copies (path -> SHA-256) whose bytes are among `kept` (read within `budget`'s size).
    private func copiesHeld(in kept: [PendingVersions.Version], copies: [CopyFile], budget: ForeignVersionBudget) -> [String: String] {
        let hashes = Set(kept.map(\.sha256))
        var held: [String: String] = [:]
        for copy in copies where copy.size <= budget.sizeLimit {
            guard let bytes = try? ForeignVersion.read(atPath: copy.path, on: fileSystem, followSymlinks: false, budget: budget).bytes else { continue }
            let sha256 = SHA256.hexHash(bytes)
            if hashes.contains(sha256) { held[copy.path] = sha256 }
        }
        return held
    }

    /// The version whose bytes are `bytes`, opened (once: kept by SHA-256 while it is in use); nil
    /// when it does not open with this key.
    private func version(_ bytes: Data, sha256: String) -> Reconciler.Version? {
        try? openedVersion(bytes, sha256: sha256)
    }

    /// The vault file's `bytes` opened. Anyone who can write into the folder can change its header
    /// without the password, so a file whose key derivation costs other than the version this device
    /// synced (`baseBytes`) is a version from elsewhere until it opens: held to the foreign budget
    /// measured against that version, and refused before any derivation beyond it. Each distinct
    /// header's key is derived once (`vaultKeys`): a file touched or rewritten with the same header is
    /// not derived again, whether it opened or not.
    /// `decided`: a person's decision is carried out on it, which opens it with the vault's own limits.
    private func openVaultFile(_ bytes: Data, baseBytes: Data?, budget: ForeignVersionBudget, decided: Bool) throws -> OpenedVault {
        let header = try KDBXReader.header(of: bytes)
        var openLimits = limits
        if !decided, let baseBytes, let baseHeader = try? KDBXReader.header(of: baseBytes),
           !header.kdf.hasSameCost(as: baseHeader.kdf) {
            openLimits = budget.limits
            do {
                try header.kdf.check(against: openLimits)
            } catch {
                throw VaultFileRefusal.costlierKeyDerivation("\(error)")
            }
            // A header changed by someone without the password (rewritten with a new salt each time)
            // costs the vault's allowance like junk copies do: derived only while it has room.
            if vaultKeys[header.kdf.fingerprint] == nil {
                do {
                    return try allowance.whenAdmitted { try openDeriving(bytes, header: header, limits: openLimits) }
                } catch ForeignVersion.Refusal.deferred {
                    throw VaultFileRefusal.allowanceSpent(until: allowance.nextRoom(at: Date()))
                }
            }
        }
        return try openDeriving(bytes, header: header, limits: openLimits)
    }

    /// `bytes` (whose header is `header`) opened with the key derived for that header, derived now
    /// if this watcher has not derived it before.
    private func openDeriving(_ bytes: Data, header: OuterHeader, limits openLimits: ResourceLimits) throws -> OpenedVault {
        let fingerprint = header.kdf.fingerprint
        let derived: DerivedKey
        if let known = vaultKeys[fingerprint] {
            derived = known
        } else if let cachedKey, cachedKey.kdf == header.kdf {
            derived = cachedKey
        } else {
            derived = try DerivedKey(compositeKey: key, kdf: header.kdf, limits: openLimits, version: header.version)
        }
        if vaultKeys.count >= Self.vaultKeysKept { vaultKeys.removeAll() }
        vaultKeys[fingerprint] = derived
        return try KDBXReader.open(bytes, key: key, cachedKey: derived, limits: openLimits)
    }

    /// How many headers' keys are kept (a few: the vault's own, and what was planted in its place).
    private static let vaultKeysKept = 4

    /// `bytes` opened with the vault's key (once per content), or why they do not open.
    private func openedVersion(_ bytes: Data, sha256: String) throws -> Reconciler.Version {
        if let opened = openedVersions[sha256] { return Reconciler.Version(sha256: sha256, vault: opened.vault) }
        let opened = try KDBXReader.open(bytes, key: key, cachedKey: cachedKey, limits: limits)
        openedVersions[sha256] = opened
        return Reconciler.Version(sha256: sha256, vault: opened.vault)
    }

    /// Keeps this device's versions a person chose not to have (`Reconciliation.setAside`: the base,
    /// pending versions) among the vault's retired copies, then forgets them as pending: recoverable
    /// (`conflicts --merged` lists them), never restored. False (reported) when one could not be kept:
    /// then nothing else is done.
    private func setAside(_ versions: [String]) -> Bool {
        guard !versions.isEmpty else { return true }
        let pending = PendingVersions(state: state, vaultPath: path)
        let kept = pending.list()
        let base = state.base(for: path)
        let retired = RetiredCopies(state: state, vaultPath: path)
        let name = PathText.name(of: path) + " (this device's version, set aside)"
        for sha256 in versions {
            var bytes: Data?
            if let base, base.record.fingerprint.sha256 == sha256 {
                bytes = base.bytes
            } else if let version = kept.first(where: { $0.sha256 == sha256 }), case .bytes(let read) = pending.read(version) {
                bytes = read
            }
            do {
                guard let bytes else { throw FileError.notFound(path: "a version of this device (\(sha256.prefix(12)))") }
                _ = try retired.store(bytes, originalName: name)
            } catch {
                report(.error(vault: path, message: "this device's version could not be set aside: \(error)"))
                return false
            }
            pending.retire(sha256: sha256)
        }
        return true
    }

    /// Carries out the effects of one reconciliation in order (the new version recorded, pending
    /// versions retired, copies reported, copies and lacking versions merged in one commit); what that did.
    private func carryOut(_ effects: [Reconciler.Effect], of plan: Reconciler.Reconciliation, versions: Reconciler.Versions, bytes: Data,
                          fingerprint: Fingerprint) -> CheckEnding.Carried {
        var carried = CheckEnding.Carried()
        carried.done = plan.retryAt == nil
        let pending = PendingVersions(state: state, vaultPath: path)
        for effect in effects {
            switch effect {
            case .tell:
                tell(effect)
            case .setAside(let versions):
                guard setAside(versions) else {
                    carried.done = false
                    carried.failure = "this device's version could not be set aside"
                    return carried
                }
            case .recordBase(let takeIn, let replacedIsHeld):
                if case .changed(let changes) = takeIn { carried.changes += changes }
                carried.tookIn = true
                do {
                    try state.record(bytes, fingerprint: fingerprint, for: path, replaced: replacedIsHeld ? .contained : .stayPending)
                } catch {
                    report(.error(vault: path, message: "\(error)"))
                    carried.failure = "\(error)"
                }
            case .retire(let sha256):
                pending.retire(sha256: sha256)
            case .fold(let copies, let restoring):
                fold(copies, restoring: restoring, of: plan, versions: versions, bytes: bytes, fingerprint: fingerprint, into: &carried)
            case .rebuild, .overwrite:
                break  // plans of their own, never part of a reconciliation
            }
        }
        saveFailedCopies()
        return carried
    }

    /// Merges `copies` and the pending versions `restoring` (by SHA-256) into the vault in one
    /// commit, reports what that did to `Reconciler.settle` and carries out what follows.
    private func fold(_ copies: [CopyFile], restoring: [String], of plan: Reconciler.Reconciliation, versions: Reconciler.Versions,
                      bytes: Data, fingerprint: Fingerprint, into carried: inout CheckEnding.Carried) {
        let known = [versions.base, versions.disk].compactMap { $0 } + versions.pending
        let inputs = restoring.compactMap { sha256 in known.first { $0.sha256 == sha256 } }.map {
            MergeCommit.Input(name: "a version this device synced", vault: $0.vault, sha256: $0.sha256, base: .remembered($0.vault))
        }
        guard let opened = openedVersions[fingerprint.sha256] else {
            carried.done = false
            return
        }
        let outcome: Reconciler.FoldOutcome
        do {
            let session = try SyncSession(context: context, onDisk: opened, bytes: bytes, fingerprint: fingerprint)
            let folded = try CopyFolding.fold(copies.map(\.copy), into: session, base: opened.vault, key: key,
                                              cachedKey: opened.derivedKey, limits: limits, dryRun: false,
                                              prefetched: prefetch, restoring: inputs, budget: budget)
            if folded.wroteVault {
                Reconciler.wrote(session.fingerprint, in: &memory)
                // The version written is the next check's base: kept open, not parsed again.
                openedVersions[session.fingerprint.sha256] = session.opened
            }
            carried.wroteVault = folded.wroteVault
            carried.restored = folded.restored
            outcome = .folded(folded)
        } catch SaveError.changedOnDisk {
            outcome = .changedOnDisk
        } catch {
            outcome = .failed("merging into the vault: \(error)")
        }
        let settled = Reconciler.settle(outcome, of: plan, copiesHeld: copiesPending, vault: path, nextRoom: allowance.nextRoom(at: Date()),
                                        memory: &memory)
        let pending = PendingVersions(state: state, vaultPath: path)
        for effect in settled.effects {
            if case .retire(let sha256) = effect { pending.retire(sha256: sha256) } else { tell(effect) }
        }
        carried.changes += settled.changes
        if settled.deferred {
            retryNotBefore = clock.now.addingTimeInterval(allowance.nextRoom(at: Date()).timeIntervalSinceNow)
        }
        carried.failure = carried.failure ?? settled.failure
        carried.done = carried.done && !settled.retryLater
    }

    /// Writes this device's version `base` over the version on disk (`fingerprint`, read as `bytes`)
    /// through the session's compare-and-swap, only over that version; the disk's is kept as a backup.
    private func overwrite(_ fingerprint: Fingerprint, bytes: Data, with base: Reconciler.Version) -> CheckEnding {
        guard let own = openedVersions[base.sha256], let disk = openedVersions[fingerprint.sha256] else {
            return .failed("the versions to overwrite are no longer open")
        }
        do {
            let session = try SyncSession(path: path, working: own, key: key, state: state, limits: limits, basedOn: fingerprint,
                                          settings: context.settings)
            let resolution = try session.overwrite(disk, bytes: bytes, fingerprint: fingerprint)
            if resolution.wroteFile {
                Reconciler.wrote(session.fingerprint, in: &memory)
                openedVersions[session.fingerprint.sha256] = session.opened
            }
            return .overwrote(resolution)
        } catch SaveError.changedOnDisk {
            return .asked(fingerprint.sha256)  // another version since the listing: its file event brings the check that asks about it
        } catch {
            report(.error(vault: path, message: "writing this device's version over the disk's: \(error)"))
            return .failed("writing this device's version over the disk's: \(error)")
        }
    }

    /// Whether a conflict copy beside the vault opens, is this database, and holds every entry at least
    /// as new as `base` has it where `disk` has it older. Each copy is opened through the one
    /// copy-opening step (`ForeignVersion.openCopy`) within the check's budget;
    /// those refused are added to `refused` (to be remembered as failed: not derived again while unchanged).
    private func copyHoldsNewerVersions(
        than disk: Vault, base: Vault, copies: [CopyFile], refused: inout [(copy: CopyFile, reason: ForeignVersion.Refusal)]
    ) -> Bool {
        let baseTimes = Dictionary(base.root.allEntries().map { ($0.entry.uuid, $0.entry.times.lastModified) }, uniquingKeysWith: { max($0, $1) })
        let older = disk.root.allEntries().compactMap { item -> UUID? in
            guard let time = baseTimes[item.entry.uuid], item.entry.times.lastModified < time else { return nil }
            return item.entry.uuid
        }
        for copy in copies {
            let opened: OpenedVault
            switch ForeignVersion.openCopy(atPath: copy.path, on: fileSystem, key: key, cachedKey: cachedKey, budget: budget, identity: DatabaseIdentity(base)) {
            case .gone: continue
            case .refused(let refusal):
                refused.append((copy, refusal))
                continue
            case .opened(let copyOpened): opened = copyOpened.opened
            }
            let copyTimes = Dictionary(opened.vault.root.allEntries().map { ($0.entry.uuid, $0.entry.times.lastModified) },
                                       uniquingKeysWith: { max($0, $1) })
            if older.allSatisfy({ uuid in copyTimes[uuid].map { $0 >= baseTimes[uuid]! } ?? false }) { return true }
        }
        return false
    }
}

/// What a watcher does on the file-event thread when a conflict copy appears: start opening it (and
/// add it to the pending versions) with the parameters the last check set.
public final class CopyArrivals: Sendable {
    /// Copies opened ahead, for the next check.
    package let prefetch = CopyPrefetch()
    /// How a copy is opened now (the vault's KDF, key and size); nil until the vault was read.
    private let opening = Mutex<CopyPrefetch.Parameters?>(nil)

    init() {}

    func set(_ parameters: CopyPrefetch.Parameters) { opening.withLock { $0 = parameters } }

    /// A conflict copy appeared at `copyPath`: start opening it now (once the vault is known).
    public func prepare(copyAt copyPath: String) {
        guard let parameters = opening.withLock({ $0 }) else { return }
        prefetch.start(copyPath, with: parameters)
    }
}

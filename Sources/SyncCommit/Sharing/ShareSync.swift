public import Foundation
public import SyncFiles
public import SyncState
public import KDBXFormat
public import MyPassCore
public import MyPassMerge
internal import MyPassCrypto

/// A vault's shared groups (KeePassXC's KeeShare) kept in step with their containers: one pass
/// imports every approved importing share (`SharedGroupMerge.importing`, three-way against the
/// container version last exchanged), and, once the vault holding the imports is saved, exports every
/// approved exporting share (a container changed meanwhile merged first, written by compare-and-swap).
/// What `share sync`, the watcher and the daemon run. Pure decisions are in MyPassMerge; this is the I/O.
public struct ShareSync: Sendable {
    /// The vault's path.
    public let vaultPath: String
    /// Where the exchanged versions and approvals are kept.
    public let state: SyncStateStore
    /// The clock (the export's times).
    public let clock: @Sendable () -> Timestamp
    /// How the sync engines here name a container's conflict copies.
    public let copyNaming: ConflictCopies.Naming
    /// The vault's allowance of time for versions from elsewhere that fail to open (a watcher's):
    /// containers and their copies count against it, so junk rewritten every fraction of a second
    /// waits once it is spent. Nil: each container is held to its per-version budget only.
    public let allowance: ForeignWorkAllowance?

    /// The shares of the vault at `vaultPath`, kept in `state`.
    public init(vaultPath: String, state: SyncStateStore, copyNaming: ConflictCopies.Naming = .standard,
                allowance: ForeignWorkAllowance? = nil, clock: @escaping @Sendable () -> Timestamp = { .now() }) {
        self.allowance = allowance
        // Absolute and resolved: a relative container path is taken against the vault's real folder.
        self.vaultPath = DurableFile.canonicalPath(vaultPath, on: state.fileSystem)
        self.state = state
        self.copyNaming = copyNaming
        self.clock = clock
    }

    private var exchanges: ShareExchanges { ShareExchanges(state: state, vaultPath: vaultPath) }

    /// One shared group as this device sees it.
    public struct Share: Sendable {
        /// The group.
        public let group: UUID
        /// The group's path in the vault.
        public let groupPath: String
        /// Its reference, nil when it does not read (`problem` says why).
        public let reference: ShareReference?
        /// Why the share does nothing (an unreadable reference, a container that is not a `.kdbx`).
        public let problem: String?
        /// The container's path, resolved against the vault's folder.
        public let containerPath: String?
        /// Whether a person approved this reference on this device.
        public let approved: Bool
        /// When it last imported and exported.
        public let record: ShareExchanges.Record

        /// Whether a pass acts on it.
        public var acts: Bool { approved && problem == nil && reference.map { $0.mode != .inactive } ?? false }
    }

    /// What one pass did for one share.
    public struct Outcome: Sendable {
        /// The group and its path.
        public let group: UUID
        public let groupPath: String
        /// Changes the import made to the vault.
        public var imported: [Change] = []
        /// How each property the import compared was decided (when explaining).
        public var decisions: [FieldDecision] = []
        /// Whether the container was written.
        public var exported = false
        /// Why nothing was done, or what failed.
        public var skipped: String?
        /// The reference waits for a person's approval on this device: its approval digest (what an
        /// approval of it records: `approve(_:digest:)`).
        public var awaitingApproval: String?
        /// What kind of failure stopped the import or the export (nil: none failed).
        public var failure: FailureKind?
        /// The container waits for the vault's allowance of time for versions from elsewhere.
        public var deferred = false
    }

    /// An imported container version, recorded as exchanged once the vault holding it is saved.
    public struct PendingExchange: Sendable {
        let group: UUID
        let bytes: Data
        /// The container's conflict copies merged in, retired once a container holding them is written.
        let copies: [FoldedCopy]
    }

    /// A container's conflict copy merged into the group.
    struct FoldedCopy: Sendable {
        let path: String
        let bytes: Data
        let fingerprint: Fingerprint
    }

    /// The digest a person's approval is kept as: the mode, the reference's UUID and the container's
    /// path (not the password; a new password for the same container needs no new approval).
    public static func approvalDigest(of reference: ShareReference) -> String {
        SHA256.hexHash(Data("\(reference.mode.rawValue)\n\(reference.identifier.uuidString)\n\(reference.containerPath)".utf8))
    }

    /// Every group of `vault` carrying a reference, in tree order.
    public func shares(of vault: Vault) -> [Share] {
        var seenContainers = Set<String>()
        return vault.sharedGroups.map { group, text in
            let groupPath = vault.path(ofGroup: group.uuid)?.description ?? "/"
            let record = exchanges.record(for: group.uuid)
            let decoded = Result { () throws(ShareReferenceText.Failure) -> ShareReference in try ShareReferenceText.decode(text) }
            guard case .success(let reference) = decoded else {
                let problem = if case .failure(let failure) = decoded { failure.description } else { "" }
                return Share(group: group.uuid, groupPath: groupPath, reference: nil, problem: problem, containerPath: nil, approved: false, record: record)
            }
            let resolved = reference.resolvedContainerPath(vaultPath: vaultPath)
            var problem: String?
            if case .failure(let refusal) = Result(catching: { () throws(ContainerFile.Refusal) in try ContainerFile(path: resolved, on: state.fileSystem) }) {
                problem = refusal.description
            }
            if problem == nil, !seenContainers.insert(DurableFile.canonicalPath(resolved, on: state.fileSystem)).inserted {
                problem = "another shared group of this vault uses the same container"
            }
            if problem == nil, DurableFile.canonicalPath(resolved, on: state.fileSystem) == DurableFile.canonicalPath(vaultPath, on: state.fileSystem) {
                problem = "the container is the vault itself"
            }
            return Share(group: group.uuid, groupPath: groupPath, reference: reference, problem: problem, containerPath: resolved,
                         approved: record.approvedReference == Self.approvalDigest(of: reference), record: record)
        }
    }

    /// Approves the reference the group `group` of `vault` carries now, on this device.
    public func approve(_ group: UUID, in vault: Vault) throws {
        guard let share = shares(of: vault).first(where: { $0.group == group }), let reference = share.reference else {
            throw ShareSyncError.noReference
        }
        var record = exchanges.record(for: group)
        record.approvedReference = Self.approvalDigest(of: reference)
        try exchanges.save(record, for: group)
    }

    /// `vault` with `reference` on its group `group` (KeePassXC's text), replacing any it had.
    public static func sharing(_ group: UUID, of vault: Vault, with reference: ShareReference, at time: Timestamp = .now()) throws -> Vault {
        let text = try ShareReferenceText.encode(reference)
        return try vault.updatingGroup(group, at: time) { edited in
            edited.customData.removeAll { $0.key == ShareReference.customDataKey }
            edited.customData.append(CustomDataItem(key: ShareReference.customDataKey, value: text, lastModified: time))
        }
    }

    /// `vault` without the reference of its group `group`.
    public static func unsharing(_ group: UUID, of vault: Vault, at time: Timestamp = .now()) throws -> Vault {
        try vault.updatingGroup(group, at: time) { $0.customData.removeAll { $0.key == ShareReference.customDataKey } }
    }

    /// Throws unless `reference`'s container is a name this tool shares through and, where it exists,
    /// opens with the reference's password.
    public func checkContainer(of reference: ShareReference) throws(ContainerFile.Refusal) {
        let file = try ContainerFile(path: reference.resolvedContainerPath(vaultPath: vaultPath), on: state.fileSystem)
        _ = try file.read(password: reference.password, budget: .withoutReference(within: .standard))
    }

    /// Keeps the names of `vault`'s shared groups in the state (`daemon status` shows them).
    public func keepSummaries(of vault: Vault) throws {
        try exchanges.saveSummaries(shares(of: vault).map { share in
            ShareExchanges.Summary(group: share.group, path: share.groupPath, type: share.reference?.mode.rawValue,
                                   container: share.reference?.containerPath, approved: share.approved, problem: share.problem,
                                   reference: share.reference.map(Self.approvalDigest(of:)))
        })
    }

    /// Approves the reference whose approval digest is `digest` on the group `group`, as a person
    /// answering a notice about it: only that reference (one put in its place since stays unapproved,
    /// the pass compares the digest with the reference it finds), and only while the last pass saw it
    /// there (an older notice does not displace a newer approval). Returns whether it was recorded.
    public func approve(_ group: UUID, digest: String) throws -> Bool {
        guard exchanges.summaries().contains(where: { $0.group == group && $0.reference == digest }) else { return false }
        var record = exchanges.record(for: group)
        record.approvedReference = digest
        try exchanges.save(record, for: group)
        return true
    }

    /// Forgets what this device kept for `group` (its share was removed).
    public func forget(_ group: UUID) { exchanges.forget(group) }

    /// `vault` with every acting importing share's container merged into its group; the containers
    /// imported, to record as exchanged once the vault is saved (`record`).
    public func importing(into vault: Vault, explaining: SecretFingerprint? = nil) -> (vault: Vault, outcomes: [Outcome], pending: [PendingExchange]) {
        var current = vault, outcomes: [Outcome] = [], pending: [PendingExchange] = []
        for share in shares(of: vault) {
            var outcome = Outcome(group: share.group, groupPath: share.groupPath)
            guard let reference = share.reference, share.acts, reference.mode.imports, let path = share.containerPath else {
                outcome.skipped = Self.whyIdle(share, importing: true)
                if let reference = share.reference, share.problem == nil, !share.approved, reference.mode != .inactive {
                    outcome.awaitingApproval = Self.approvalDigest(of: reference)
                }
                outcomes.append(outcome)
                continue
            }
            do {
                let exchanged = exchangedVersion(share.group, password: reference.password)
                let file = try ContainerFile(path: path, on: state.fileSystem)
                let read = try file.read(password: reference.password, budget: exchanged.budget)
                // The container's own conflict copies (two writers before their sync engine met) are
                // versions of it too: each merged in against the same exchanged version.
                var copies: [FoldedCopy] = []
                for copy in file.conflictCopies(naming: copyNaming) {
                    guard let opened = try? ContainerFile(path: copy, on: state.fileSystem).read(password: reference.password, budget: exchanged.budget) else {
                        continue  // a copy that does not open is left where it is
                    }
                    let result = try SharedGroupMerge.importing(opened.opened.vault, exchanged: exchanged.vault, into: current, group: share.group)
                    current = result.vault
                    outcome.imported += result.changes
                    copies.append(FoldedCopy(path: copy, bytes: opened.bytes, fingerprint: opened.fingerprint))
                }
                guard let read else {
                    outcome.skipped = copies.isEmpty ? "no container yet" : nil
                    if !copies.isEmpty { pending.append(PendingExchange(group: share.group, bytes: Data(), copies: copies)) }
                    outcomes.append(outcome)
                    continue
                }
                let result = try SharedGroupMerge.importing(read.opened.vault, exchanged: exchanged.vault, into: current, group: share.group, explaining: explaining)
                current = result.vault
                outcome.imported += result.changes
                outcome.decisions = result.decisions
                pending.append(PendingExchange(group: share.group, bytes: read.bytes, copies: copies))
            } catch {
                outcome.skipped = "import failed: \(error)"
                outcome.failure = FailureKind(of: error)
                outcome.deferred = (error as? ContainerFile.Refusal) == .deferred
            }
            outcomes.append(outcome)
        }
        return (current, outcomes, pending)
    }

    /// Records the containers imported as exchanged (after the vault holding them was saved).
    public func record(_ pending: [PendingExchange], at time: Date = Date()) throws {
        for exchange in pending where !exchange.bytes.isEmpty {
            try exchanges.recordExchanged(exchange.bytes, for: exchange.group)
            var record = exchanges.record(for: exchange.group)
            record.lastImport = time
            try exchanges.save(record, for: exchange.group)
        }
    }

    /// Writes every acting exporting share's container from `vault` (a saved version), merging a
    /// container changed since the last exchange first; `dryRun` writes nothing. Outcomes by group.
    public func exporting(_ vault: Vault, dryRun: Bool = false, folded: [PendingExchange] = []) -> [Outcome] {
        shares(of: vault).map { share in
            var outcome = Outcome(group: share.group, groupPath: share.groupPath)
            guard let reference = share.reference, share.acts, reference.mode.exports, let path = share.containerPath else {
                outcome.skipped = Self.whyIdle(share, importing: false)
                return outcome
            }
            do {
                outcome.exported = try export(share.group, of: vault, reference: reference, to: ContainerFile(path: path, on: state.fileSystem), dryRun: dryRun)
                // The container now holds what its conflict copies held: they leave the synced folder.
                if !dryRun {
                    for copy in folded.filter({ $0.group == share.group }).flatMap(\.copies) { retire(copy, of: path) }
                }
            } catch {
                outcome.skipped = "export failed: \(error)"
                outcome.failure = FailureKind(of: error)
            }
            return outcome
        }
    }

    /// Writes the group's container. Synchronizing, the container must be the version this pass
    /// imported (one changed since is imported first: `containerChanged`), and what is written is
    /// what the next import compares with. Exporting only, a container another writer changed is
    /// merged first and its additions kept there, while what this device remembers as exchanged is its
    /// own contribution (so the next export does not read their additions as deletions of its own).
    private func export(_ group: UUID, of vault: Vault, reference: ShareReference, to file: ContainerFile, dryRun: Bool) throws -> Bool {
        let importsFirst = reference.mode.imports
        for _ in 0..<3 {
            let exchanged = exchangedVersion(group, password: reference.password)
            let current = try file.read(password: reference.password, budget: exchanged.budget)
            if importsFirst, !dryRun, let current, exchanged.vault.map({ !VaultDiff.sameContent($0, current.opened.vault) }) ?? true {
                throw ShareSyncError.containerChanged
            }
            guard let container = try SharedGroupMerge.exporting(vault, group: group, current: current?.opened.vault, exchanged: exchanged.vault, at: clock()),
                  let own = vault.shareContainer(of: group, previous: exchanged.vault ?? current?.opened.vault, at: clock()) else {
                throw ShareSyncError.noReference
            }
            let settings = try current?.opened.settings ?? ContainerFile.newContainerSettings()
            /// What the next pass compares with: the container as written (synchronizing), else this vault's own part.
            func remember(written: Data) throws {
                guard !dryRun else { return }
                if importsFirst {
                    try exchanges.recordExchanged(written, for: group)
                } else if exchanged.vault.map({ !VaultDiff.sameContent($0, own) }) ?? true {
                    try exchanges.recordExchanged(try file.encode(own, password: reference.password, settings: settings), for: group)
                }
            }
            if let current, VaultDiff.sameContent(current.opened.vault, container) {
                try remember(written: current.bytes)
                return false
            }
            if dryRun { return true }
            do {
                let written = try file.write(container, password: reference.password, settings: settings, expected: current?.fingerprint)
                try remember(written: written.bytes)
                var record = exchanges.record(for: group)
                record.lastExport = Date()
                try exchanges.save(record, for: group)
                return true
            } catch SaveError.changedOnDisk {
                if importsFirst { throw ShareSyncError.containerChanged }
                continue  // written meanwhile: merge that version first
            }
        }
        throw ContainerFile.Refusal.keepsChanging
    }

    /// Moves a container's merged conflict copy out of the synced folder into the state (kept, as the
    /// vault's merged copies are), unless it changed since it was read.
    private func retire(_ copy: FoldedCopy, of container: String) {
        guard (try? DurableFile.fingerprint(atPath: copy.path, on: state.fileSystem)) == copy.fingerprint,
              (try? RetiredCopies(state: state, vaultPath: container).store(copy.bytes, originalName: PathText.name(of: copy.path))) != nil,
              let (directory, name) = try? DirectoryHandle.parent(of: copy.path, on: state.fileSystem) else { return }
        _ = SystemCalls.unlink(name, in: directory)
    }

    /// The version last exchanged for `group`, opened, and the budget for the container measured against it.
    private func exchangedVersion(_ group: UUID, password: ProtectedValue) -> (vault: Vault?, budget: ForeignVersionBudget) {
        let bytes = exchanges.exchanged(for: group, limit: 256 << 20)
        let budget = ForeignVersionBudget(measuredAgainst: bytes, within: .standard)
        // The version kept in the state is this device's own: opened within its size, never deferred;
        // the containers read against it count against the vault's allowance.
        return (bytes.flatMap { ContainerFile.open($0, password: password, budget: budget)?.vault }, budget.metered(by: allowance))
    }

    private static func whyIdle(_ share: Share, importing: Bool) -> String? {
        if let problem = share.problem { return problem }
        guard let reference = share.reference else { return "no reference" }
        if !share.approved { return "not approved on this device (`mypass-sync share approve`)" }
        if reference.mode == .inactive { return "inactive" }
        return nil
    }
}

/// What a share command cannot do.
public enum ShareSyncError: Error, Equatable, Sendable, CustomStringConvertible {
    case noReference
    /// The container changed after this pass imported it: imported again before anything is written.
    case containerChanged

    public var description: String {
        switch self {
        case .noReference: "the group carries no KeeShare reference"
        case .containerChanged: "the container changed while it was being taken in; taken in again first"
        }
    }
}

import Foundation
import MyPassCore
@testable import MyPassSync
@testable import SyncCommit
@testable import SyncFiles
@testable import SyncRemote
@testable import SyncState
@testable import SyncWatch
import Testing
import TestSupport

/// The watcher's rules, each driven through the pure `Reconciler` with vaults in memory and a clock
/// the test sets: no files, no processes, no sleeps.
@Suite("Reconciler: every rule of the watcher, with a fake clock")
struct ReconcilerTests {
    private static let start = Date(timeIntervalSince1970: 1_800_000_000)
    private static let created = Timestamp(unixSeconds: 1_800_000_000)

    /// A vault with entries "A" and "B".
    private static func original() throws -> Vault {
        var vault = Vault.empty(name: "reconciler", at: created)
        vault = try vault.addingEntry(title: "A", password: "a", to: vault.root.uuid, at: created).vault
        return try vault.addingEntry(title: "B", password: "b", to: vault.root.uuid, at: created).vault
    }

    private static func adding(_ title: String, to vault: Vault, at seconds: Int64) throws -> Vault {
        try vault.addingEntry(title: title, password: title.lowercased(), to: vault.root.uuid, at: Timestamp(unixSeconds: 1_800_000_000 + seconds)).vault
    }

    private static func editing(_ title: String, in vault: Vault, password: String, at seconds: Int64) throws -> Vault {
        let entry = vault.root.entries.first { $0.title == title }!
        return try vault.updatingEntry(entry.uuid, at: Timestamp(unixSeconds: 1_800_000_000 + seconds)) {
            $0.setField("Password", FieldValue(password, isProtected: true))
        }
    }

    private static func version(_ name: String, _ vault: Vault) -> Reconciler.Version {
        Reconciler.Version(sha256: String(repeating: name, count: 64 / name.count), vault: vault)
    }

    /// A file born at a time that stands for its inode (one file per inode in these tests).
    private static func born(_ inode: UInt64) -> FileTime { FileTime(seconds: 1_700_000_000 + Int64(inode), nanoseconds: 0) }

    private static func snapshot(_ version: Reconciler.Version?, inode: UInt64 = 1, copies: [CopyFile] = [], transfers: [String] = []) -> FolderSnapshot {
        let fingerprint = Fingerprint(device: 1, inode: inode, size: 100, modifiedSeconds: 0, modifiedNanoseconds: 0, sha256: version?.sha256 ?? "")
        let identity = FileIdentity(device: 1, inode: inode, born: born(inode), size: 100, modified: FileTime(seconds: 0, nanoseconds: 0))
        return FolderSnapshot(vault: version == nil ? .missing : .present(fingerprint), transfers: transfers, copies: copies,
                              vaultIdentity: version == nil ? nil : identity)
    }

    private static func copy(_ name: String, inode: UInt64, modified: Int64 = 0) -> CopyFile {
        CopyFile(path: "/folder/vault.sync-conflict-20261201-120000-\(name).kdbx", engine: .syncthing, inode: inode, size: 100,
                 modified: FileTime(seconds: modified, nanoseconds: 0), born: born(inode), device: 1)
    }

    /// A copy rclone bisync renamed aside (`..pathN`), born at `born` (seconds after the start).
    private static func renamedAside(_ side: Int, inode: UInt64, born: Int64?, size: Int64 = 100) -> CopyFile {
        CopyFile(path: "/folder/vault.kdbx..path\(side)", engine: .rclone, inode: inode, size: size, modified: FileTime(seconds: 0, nanoseconds: 0),
                 born: born.map { FileTime(seconds: 1_800_000_000 + $0, nanoseconds: 0) }, device: 1)
    }

    /// The identity of the vault file with this inode and birth time.
    private static func vaultFile(inode: UInt64, born: Int64?) -> FileIdentity {
        FileIdentity(device: 1, inode: inode, born: born.map { FileTime(seconds: 1_800_000_000 + $0, nanoseconds: 0) }, size: 100,
                     modified: FileTime(seconds: 0, nanoseconds: 0))
    }

    private static func reconciliation(_ plan: Reconciler.Plan) -> Reconciler.Reconciliation? {
        if case .reconcile(let reconciliation) = plan { return reconciliation }
        Issue.record("expected a reconciliation, got \(plan)")
        return nil
    }

    @Test("a transfer in progress waits; a missing vault waits; a failed read fails: nothing is taken")
    func waits() throws {
        var memory = Reconciler.Memory()
        let base = Self.version("b", try Self.original())
        let transfer = Reconciler.plan(Self.snapshot(base, transfers: [".syncthing.vault.kdbx.tmp"]), versions: .init(base: base, disk: nil),
                                       memory: &memory, now: Self.start, policy: .init())
        guard case .wait(.transfers(let names)) = transfer else { Issue.record("\(transfer)"); return }
        #expect(names == [".syncthing.vault.kdbx.tmp"])
        guard case .wait(.vaultMissing) = Reconciler.plan(Self.snapshot(nil), versions: .init(base: base, disk: nil), memory: &memory,
                                                          now: Self.start, policy: .init()) else { Issue.record("missing not waited"); return }
        guard case .fail = Reconciler.plan(FolderSnapshot(vault: .failed("EIO")), versions: .init(base: base, disk: nil), memory: &memory,
                                           now: Self.start, policy: .init()) else { Issue.record("failure not said"); return }
    }

    @Test("the first version is taken in as the base; the same version again is nothing to do")
    func firstAndQuiet() throws {
        var memory = Reconciler.Memory()
        let first = Self.version("a", try Self.original())
        let plan = Self.reconciliation(Reconciler.plan(Self.snapshot(first), versions: .init(base: nil, disk: first), memory: &memory,
                                                       now: Self.start, policy: .init()))
        guard case .first = plan?.takeIn else { Issue.record("not taken in as the first version"); return }
        let quiet = Self.reconciliation(Reconciler.plan(Self.snapshot(first), versions: .init(base: first, disk: nil), memory: &memory,
                                                        now: Self.start, policy: .init()))
        #expect(quiet?.isEmpty == true)
    }

    @Test("a descendant is taken in with its changes, and the base it replaces is contained: nothing to restore")
    func descendantTakenIn() throws {
        var memory = Reconciler.Memory()
        let base = Self.version("b", try Self.original())
        let disk = Self.version("d", try Self.editing("A", in: base.vault, password: "a2", at: 60))
        let plan = Self.reconciliation(Reconciler.plan(Self.snapshot(disk), versions: .init(base: base, disk: disk), memory: &memory,
                                                       now: Self.start, policy: .init()))
        guard case .changed(let changes) = plan?.takeIn else { Issue.record("not taken in"); return }
        #expect(Set(changes.map(\.title)) == ["A"])
        #expect(plan?.restoreFrom == [] && plan?.retire == [base.sha256])
    }

    /// Three devices: this device added an entry (its base); the file now holds a concurrent version
    /// from another device, and the conflict copy that held this device's version was overwritten by
    /// a third device's copy of the same name. Whatever the folder holds, the base this device synced
    /// is merged back in; the old rule restored only when no copy was beside the vault.
    @Test("a new version that lacks what this device synced is restored from it, even with another device's copy beside it")
    func lostContentRestoredDespiteCopies() throws {
        var memory = Reconciler.Memory()
        let original = try Self.original()
        let base = Self.version("b", try Self.adding("Mine", to: original, at: 10))
        let disk = Self.version("d", try Self.editing("B", in: original, password: "theirs", at: 11))
        let plan = Self.reconciliation(Reconciler.plan(Self.snapshot(disk, inode: 7, copies: [Self.copy("CCCCCCC", inode: 9)]),
                                                       versions: .init(base: base, disk: disk), memory: &memory, now: Self.start,
                                                       policy: .init(foreignCopyGrace: 30)))
        #expect(plan?.restoreFrom == [base.sha256])
        #expect(plan?.fold == [], "the foreign copy is in its grace")
        #expect(plan?.retryAt == Self.start.addingTimeInterval(30))
    }

    @Test("a pending version is retired once the vault holds it, and restored while it does not (reload policy: only kept)")
    func pendingVersions() throws {
        var memory = Reconciler.Memory()
        let original = try Self.original()
        let mine = Self.version("p", try Self.adding("Mine", to: original, at: 10))
        let without = Self.version("d", try Self.editing("A", in: original, password: "other", at: 20))
        let merged = Self.version("m", try Self.adding("Mine", to: without.vault, at: 10))
        var plan = Self.reconciliation(Reconciler.plan(Self.snapshot(without), versions: .init(base: without, disk: nil, pending: [mine]),
                                                       memory: &memory, now: Self.start, policy: .init()))
        #expect(plan?.restoreFrom == [mine.sha256] && plan?.retire == [])
        plan = Self.reconciliation(Reconciler.plan(Self.snapshot(without), versions: .init(base: without, disk: nil, pending: [mine]),
                                                   memory: &memory, now: Self.start, policy: .init(vault: .reload)))
        #expect(plan?.restoreFrom == [] && plan?.retire == [])
        // A version holding the same entry (same UUID? no: a new entry of the same title is not it).
        plan = Self.reconciliation(Reconciler.plan(Self.snapshot(merged), versions: .init(base: without, disk: merged, pending: [mine]),
                                                   memory: &memory, now: Self.start, policy: .init()))
        #expect(plan?.restoreFrom.contains(mine.sha256) == true, "an entry of the same title is another entry")
        let holding = Self.version("h", try Self.editing("A", in: mine.vault, password: "other", at: 20))
        plan = Self.reconciliation(Reconciler.plan(Self.snapshot(holding), versions: .init(base: without, disk: holding, pending: [mine]),
                                                   memory: &memory, now: Self.start, policy: .init()))
        #expect(plan?.restoreFrom == [] && Set(plan?.retire ?? []) == [mine.sha256, without.sha256])
        // A pending version that no longer opens (the key changed since) or is gone is retired by the
        // plan, not by the watcher while it gathers the versions.
        let gone = String(repeating: "e", count: 64)
        plan = Self.reconciliation(Reconciler.plan(Self.snapshot(without), versions: .init(base: without, disk: nil, unopenable: [gone]),
                                                   memory: &memory, now: Self.start, policy: .init()))
        #expect(plan?.retire == [gone] && plan?.restoreFrom == [])
    }

    @Test("an entry deleted with a tombstone is not restored from a pending version")
    func deletionIsNotLoss() throws {
        var memory = Reconciler.Memory()
        let original = try Self.original()
        let entry = original.root.entries.first { $0.title == "B" }!
        let deleted = Self.version("d", try original.deletingEntry(entry.uuid, permanently: true, at: Timestamp(unixSeconds: 1_800_000_100)))
        let base = Self.version("b", original)
        let plan = Self.reconciliation(Reconciler.plan(Self.snapshot(deleted), versions: .init(base: base, disk: deleted), memory: &memory,
                                                       now: Self.start, policy: .init()))
        #expect(plan?.restoreFrom == [] && plan?.retire == [base.sha256])
    }

    @Test("a rollback is held for the copy until the hold ends, then refused; a copy with the newer versions makes it a fold")
    func rollbackHeldThenRefused() throws {
        var memory = Reconciler.Memory()
        let older = Self.version("o", try Self.original())
        let base = Self.version("b", try Self.editing("A", in: older.vault, password: "newer", at: 60))
        let policy = Reconciler.Policy(rollbackHold: 20)
        var plan = Reconciler.plan(Self.snapshot(older), versions: .init(base: base, disk: older), memory: &memory, now: Self.start, policy: policy)
        guard case .wait(.rollbackHold(.rollback(olderEntries: 1), let until)) = plan else { Issue.record("\(plan)"); return }
        #expect(until == Self.start.addingTimeInterval(20))
        plan = Reconciler.plan(Self.snapshot(older), versions: .init(base: base, disk: older), memory: &memory,
                               now: Self.start.addingTimeInterval(19), policy: policy)
        guard case .wait = plan else { Issue.record("released before the hold ended: \(plan)"); return }
        plan = Reconciler.plan(Self.snapshot(older), versions: .init(base: base, disk: older), memory: &memory,
                               now: Self.start.addingTimeInterval(20), policy: policy)
        guard case .refuse(.rollback) = plan else { Issue.record("not refused after the hold: \(plan)"); return }
        // The watcher reads the copies only for a version that looks like a rollback.
        #expect(Reconciler.needsRollbackEvidence(.init(base: base, disk: older), policy: policy))
        #expect(!Reconciler.needsRollbackEvidence(.init(base: older, disk: base), policy: policy))
        plan = Reconciler.plan(Self.snapshot(older, copies: [Self.copy("AAAAAAA", inode: 1)]), versions: .init(base: base, disk: older),
                               memory: &memory, now: Self.start.addingTimeInterval(30), policy: policy, copyHoldsNewer: true)
        #expect(Self.reconciliation(plan)?.fold.count == 1)
    }

    @Test("another database in the file is refused; the ask policy asks")
    func otherDatabaseAndAsk() throws {
        var memory = Reconciler.Memory()
        let base = Self.version("b", try Self.original())
        let other = Self.version("o", Vault.empty(name: "other", at: Self.created))
        guard case .refuse(.otherDatabase) = Reconciler.plan(Self.snapshot(other), versions: .init(base: base, disk: other), memory: &memory,
                                                             now: Self.start, policy: .init()) else { Issue.record("taken"); return }
        let edited = Self.version("e", try Self.editing("A", in: base.vault, password: "x", at: 5))
        guard case .ask = Reconciler.plan(Self.snapshot(edited), versions: .init(base: base, disk: edited), memory: &memory, now: Self.start,
                                          policy: .init(vault: .ask)) else { Issue.record("not asked"); return }
    }

    @Test("a person's decision on a refused version: merge restores this device's versions into a rollback, reload takes it or another database as it is and sets this device's versions aside, a merge of two databases stays refused")
    func decisionOnRefusedVersion() throws {
        let older = Self.version("o", try Self.original())
        let base = Self.version("b", try Self.editing("A", in: older.vault, password: "newer", at: 60))
        let pendingWork = Self.version("p", try Self.editing("B", in: base.vault, password: "newest", at: 90))
        let contained = Self.version("c", older.vault)  // a pending version the rollback holds already
        let versions = Reconciler.Versions(base: base, disk: older, pending: [pendingWork, contained])
        var memory = Reconciler.Memory()
        // Without the decision: refused at once (no hold), whatever the policy.
        guard case .refuse(.rollback) = Reconciler.plan(Self.snapshot(older), versions: versions, memory: &memory, now: Self.start,
                                                        policy: .init(vault: .reload)) else { Issue.record("taken without a decision"); return }
        let merged = Self.reconciliation(Reconciler.plan(Self.snapshot(older), versions: versions, memory: &memory, now: Self.start,
                                                         policy: .init(vault: .merge, rollbackHold: 20), decision: .init(.merge)))
        #expect(merged?.takeIn != nil && Set(merged?.restoreFrom ?? []) == [base.sha256, pendingWork.sha256], "\(String(describing: merged))")
        #expect(merged?.setAside == [] && merged?.replacedBaseIsHeld == false)
        #expect(merged?.takeInOnlyByRestore == true, "the rollback would be the base before anything was merged back")
        // A decision about another version than the one on disk now: asked again, nothing taken.
        guard case .ask = Reconciler.plan(Self.snapshot(older), versions: versions, memory: &memory, now: Self.start,
                                          policy: .init(vault: .merge), decision: .init(.merge, about: "elsewhere")) else {
            Issue.record("a version nobody decided on was taken"); return
        }
        // The same for a change under the ask policy: a decision to reload or merge version X never takes Y.
        let newer = Self.version("n", try Self.editing("A", in: base.vault, password: "from elsewhere", at: 200))
        for decision in SyncSession.Decision.allCases {
            guard case .ask = Reconciler.plan(Self.snapshot(newer), versions: .init(base: base, disk: newer), memory: &memory, now: Self.start,
                                              policy: .init(vault: .ask), decision: .init(decision, about: "the version asked about")) else {
                Issue.record("\(decision) took a version swapped in after the question"); return
            }
        }
        let decided = Self.reconciliation(Reconciler.plan(Self.snapshot(older), versions: versions, memory: &memory, now: Self.start,
                                                          policy: .init(vault: .ask), decision: .init(.reload, about: older.sha256)))
        #expect(decided?.takeIn != nil && decided?.takeInOnlyByRestore == false)
        let reloaded = Self.reconciliation(Reconciler.plan(Self.snapshot(older), versions: versions, memory: &memory, now: Self.start,
                                                           policy: .init(), decision: .init(.reload)))
        #expect(reloaded?.takeIn != nil && reloaded?.restoreFrom == [], "\(String(describing: reloaded))")
        #expect(Set(reloaded?.setAside ?? []) == [base.sha256, pendingWork.sha256] && reloaded?.retire.contains(contained.sha256) == true)
        #expect(reloaded?.replacedBaseIsHeld == true, "the base is set aside, not kept pending")
        // Another database: taken as it is on reload (the old one set aside), never merged, never under ask.
        let other = Self.version("x", Vault.empty(name: "other", at: Self.created))
        let otherVersions = Reconciler.Versions(base: base, disk: other)
        guard case .refuse(.otherDatabase) = Reconciler.plan(Self.snapshot(other), versions: otherVersions, memory: &memory, now: Self.start,
                                                             policy: .init(vault: .ask), decision: .init(.merge)) else {
            Issue.record("two databases merged"); return
        }
        guard case .refuse(.otherDatabase) = Reconciler.plan(Self.snapshot(other), versions: otherVersions, memory: &memory, now: Self.start,
                                                             policy: .init(vault: .reload)) else {
            Issue.record("taken without a decision"); return
        }
        let taken = Self.reconciliation(Reconciler.plan(Self.snapshot(other), versions: otherVersions, memory: &memory, now: Self.start,
                                                        policy: .init(vault: .ask), decision: .init(.reload)))
        #expect(taken?.takeIn != nil && taken?.setAside == [base.sha256] && taken?.retire == [], "\(String(describing: taken))")
        // Later, a pending version of the old database is set aside, never retired as "contained" nor merged.
        let later = Self.reconciliation(Reconciler.plan(Self.snapshot(other), versions: .init(base: other, disk: nil, pending: [pendingWork]),
                                                        memory: &memory, now: Self.start, policy: .init()))
        #expect(later?.setAside == [pendingWork.sha256] && later?.retire == [] && later?.restoreFrom == [], "\(String(describing: later))")
    }

    @Test("overwrite is a plan: this device's version over exactly the version named; none of its own, nothing to overwrite, or another version on disk is no overwrite")
    func overwriteDecision() throws {
        let base = Self.version("b", try Self.original())
        let other = Self.version("x", Vault.empty(name: "other", at: Self.created))
        var memory = Reconciler.Memory()
        guard case .overwrite(let own) = Reconciler.plan(Self.snapshot(other), versions: .init(base: base, disk: other), memory: &memory,
                                                         now: Self.start, policy: .init(), decision: .init(.overwrite, about: other.sha256)) else {
            Issue.record("not overwritten"); return
        }
        #expect(own.sha256 == base.sha256)
        guard case .ask = Reconciler.plan(Self.snapshot(other), versions: .init(base: base, disk: other), memory: &memory, now: Self.start,
                                          policy: .init(), decision: .init(.overwrite, about: "another version")) else {
            Issue.record("a version nobody decided on was overwritten"); return
        }
        guard case .noOwnVersion = Reconciler.plan(Self.snapshot(other), versions: .init(base: nil, disk: other), memory: &memory,
                                                   now: Self.start, policy: .init(), decision: .init(.overwrite)) else {
            Issue.record("overwritten with no version of this device's"); return
        }
        // The file is this device's version already: an ordinary check, nothing to write.
        let plan = Self.reconciliation(Reconciler.plan(Self.snapshot(base), versions: .init(base: base, disk: nil), memory: &memory, now: Self.start,
                                                       policy: .init(), decision: .init(.overwrite, about: base.sha256)))
        #expect(plan?.isEmpty == true, "\(String(describing: plan))")
    }

    /// A random edit of `vault` at `seconds` after the start: a password changed, an entry added or deleted.
    private static func randomEdit(of vault: Vault, at seconds: Int64, _ random: inout SeededRandom) throws -> Vault {
        let entries = vault.root.entries
        let time = Timestamp(unixSeconds: 1_800_000_000 + seconds)
        switch Int.random(in: 0..<3, using: &random) {
        case 0 where !entries.isEmpty:
            let entry = entries[Int.random(in: 0..<entries.count, using: &random)]
            return try vault.updatingEntry(entry.uuid, at: time) { $0.setField("Password", FieldValue("p\(seconds)", isProtected: true)) }
        case 1 where entries.count > 1:
            return try vault.deletingEntry(entries[Int.random(in: 0..<entries.count, using: &random)].uuid, permanently: true, at: time)
        default:
            return try vault.addingEntry(title: "E\(seconds)", password: "n\(seconds)", to: vault.root.uuid, at: time).vault
        }
    }

    @Test("generated histories: a plan never retires a version of this device the vault does not hold, restores only into its own database, and takes a refused version only by a decision about it", arguments: 1...120)
    func generatedDecisions(seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        var history = [try Self.original()]
        for step in 1...Int.random(in: 2...6, using: &random) {
            history.append(try Self.randomEdit(of: history.last!, at: Int64(step * 60), &random))
        }
        let base = Self.version("b", history.last!)
        // The disk: an older version (a rollback, often), another database, or a version made from the base.
        let disk: Reconciler.Version
        switch Int.random(in: 0..<3, using: &random) {
        case 0: disk = Self.version("d", history[Int.random(in: 0..<(history.count - 1), using: &random)])
        case 1: disk = Self.version("d", try Self.adding("Other", to: Vault.empty(name: "other", at: Self.created), at: 5))
        default: disk = Self.version("d", try Self.randomEdit(of: base.vault, at: 1000, &random))
        }
        let pending = try (0..<Int.random(in: 0...2, using: &random)).map { index in
            Self.version("p\(index)", try Self.randomEdit(of: history[Int.random(in: 0..<history.count, using: &random)], at: Int64(2000 + index), &random))
        }
        let policy = Reconciler.Policy(vault: [VaultWatcher.Policy.merge, .reload, .ask][Int.random(in: 0..<3, using: &random)], foreignCopyGrace: 30)
        let decision: Reconciler.Decision? = Bool.random(using: &random) ? nil : Reconciler.Decision(
            SyncSession.Decision.allCases[Int.random(in: 0..<3, using: &random)],
            about: [disk.sha256, nil, "another version"][Int.random(in: 0..<3, using: &random)])
        // A copy from another device, first seen 20 s before the decision: its grace runs on through it.
        let foreign = Self.copy("FOREIGN", inode: 9)
        var memory = Reconciler.Memory()
        let versions = Reconciler.Versions(base: base, disk: disk, pending: pending)
        _ = Reconciler.plan(Self.snapshot(base, copies: [foreign]), versions: .init(base: base, disk: nil, pending: pending), memory: &memory,
                            now: Self.start.addingTimeInterval(-20), policy: policy)
        let checked = Reconciler.check(Self.snapshot(disk, copies: [foreign]), vault: Self.vaultPath, versions: versions, memory: &memory,
                                       now: Self.start, policy: policy, decision: decision)
        let plan = checked.plan
        let problem = Reconciler.replacementProblem(base: base.vault, disk: disk.vault)
        let decided = decision.map { "\($0.choice) about \($0.version.map { $0 == disk.sha256 ? "the disk's" : $0 } ?? "whatever is on disk")" }
        let context = "seed \(seed): \(problem.map { "\($0)" } ?? "no problem"), policy \(policy.vault), decision \(decided ?? "none")"
        Self.expectEffects(of: checked, disk: disk, context)
        // After the copy's grace it is folded; whatever the fold did, the copy is accounted for.
        if case .reconcile = plan {
            var later = memory
            let folding = Reconciler.check(Self.snapshot(disk, copies: [foreign]), vault: Self.vaultPath, versions: versions, memory: &later,
                                           now: Self.start.addingTimeInterval(10), policy: policy, decision: decision)
            Self.expectEffects(of: folding, disk: disk, context)
            if case .reconcile(let due) = folding.plan {
                #expect(due.fold == [foreign], "the copy's grace did not end: \(context)")
                try Self.expectSettled(due, memory: &later, &random, context)
            }
        }
        // A decision names the version it is about: another one on disk is asked about, never acted on.
        if let decision, let version = decision.version, version != disk.sha256 {
            guard case .ask = plan else { Issue.record("a version nobody decided on was not asked about: \(plan), \(context)"); return }
            return
        }
        // Overwrite is a plan of its own, only by a decision, and writes this device's version.
        if decision?.choice == .overwrite {
            guard case .overwrite(let own) = plan, own.sha256 == base.sha256 else { Issue.record("not overwritten: \(plan), \(context)"); return }
            return
        }
        // The rule, written out: a refused version is taken only by a decision about it — as it is
        // (reload), or merged with this device's (merge, a rollback only); never without one.
        let decisionTakes: Bool
        switch (problem, decision?.choice) {
        case (nil, _), (_, nil), (.otherDatabase?, .merge?), (_, .overwrite?): decisionTakes = false
        case (.rollback?, .merge?), (_, .reload?): decisionTakes = true
        }
        let taken: Bool
        switch plan {
        case .reconcile: taken = true
        case .refuse: taken = false
        case .ask: taken = false
        default: Issue.record("unexpected plan \(plan): \(context)"); return
        }
        if problem != nil { #expect(taken == decisionTakes, "refused version taken: \(taken), expected \(decisionTakes): \(context)") }
        // A decision answers the ask policy's question; without one a change is asked about.
        if problem == nil { #expect(taken == (decision != nil || policy.vault != .ask), "\(context)") }
        guard case .reconcile(let reconciliation) = plan else { return }
        let vaultPolicy = decision.map { $0.choice == .reload ? VaultWatcher.Policy.reload : .merge } ?? policy.vault
        #expect(reconciliation.takeInOnlyByRestore == (problem != nil && vaultPolicy == .merge), "\(context)")
        // The decision's check keeps the memory of the checks before: the copy's grace is not restarted.
        #expect(reconciliation.fold.isEmpty && reconciliation.retryAt == Self.start.addingTimeInterval(10),
                "the copy's grace restarted or ended early: \(String(describing: reconciliation.retryAt)), \(context)")
        let candidates = [base] + pending
        for version in candidates where reconciliation.retire.contains(version.sha256) {
            #expect(version.vault.root.uuid == disk.vault.root.uuid && Reconciler.contains(disk.vault, version.vault),
                    "retired without being held: \(version.sha256.prefix(2)), \(context)")
        }
        for sha256 in reconciliation.restoreFrom {
            let version = try #require(candidates.first { $0.sha256 == sha256 })
            #expect(version.vault.root.uuid == disk.vault.root.uuid && vaultPolicy == .merge, "\(context)")
        }
        // Every version of this device is held, restored, set aside or left pending: none simply dropped.
        let base_ = base.sha256
        if !reconciliation.replacedBaseIsHeld {
            #expect(reconciliation.restoreFrom.contains(base_), "\(context)")
        } else if !(reconciliation.retire.contains(base_) || reconciliation.setAside.contains(base_)) {
            #expect(Reconciler.contains(disk.vault, base.vault) || vaultPolicy != .merge || reconciliation.takeInOnlyByRestore,
                    "the base is replaced, neither held nor kept: \(context)")
        }
    }

    private static let vaultPath = "/folder/vault.kdbx"

    /// The effects of a check say what its plan says, in the order the watcher carries them out: a
    /// question or a refusal told about the version on disk; this device's versions set aside before
    /// the base is recorded, the version taken in told before it is recorded, each version the plan
    /// retires retired, and one fold of exactly the copies and versions the plan merges.
    private static func expectEffects(of checked: Reconciler.Check, disk: Reconciler.Version, _ context: String) {
        let told = checked.effects.compactMap { effect -> WatchEvent? in if case .tell(let event, _) = effect { event } else { nil } }
        switch checked.plan {
        case .ask:
            #expect(told == [.decisionNeeded(vault: vaultPath, version: disk.sha256)] && checked.effects.count == 1, "\(context)")
        case .refuse(let problem):
            #expect(told == [.refused(vault: vaultPath, reason: problem, version: disk.sha256)] && checked.effects.count == 1, "\(context)")
        case .overwrite(let own):
            guard case .overwrite(let written)? = checked.effects.first, checked.effects.count == 1 else { Issue.record("\(context)"); return }
            #expect(written.sha256 == own.sha256, "\(context)")
        case .reconcile(let plan):
            var retired: [String] = [], setAside: [String] = [], recorded: [Int] = [], folds: [([CopyFile], [String])] = []
            var takenInTold: Int?
            for (index, effect) in checked.effects.enumerated() {
                switch effect {
                case .retire(let sha256): retired.append(sha256)
                case .setAside(let versions):
                    setAside += versions
                    #expect(recorded.isEmpty, "set aside after the base was recorded: \(context)")
                case .recordBase(_, let held):
                    recorded.append(index)
                    #expect(held == plan.replacedBaseIsHeld, "\(context)")
                case .fold(let copies, let restoring): folds.append((copies, restoring))
                case .tell(.reloaded, _), .tell(.baseRecorded, _): takenInTold = index
                case .tell, .rebuild, .overwrite: break
                }
            }
            #expect(retired == plan.retire && setAside == plan.setAside, "\(context)")
            let takesIn = plan.takeIn != nil && !plan.takeInOnlyByRestore
            #expect(recorded.count == (takesIn ? 1 : 0) && (takenInTold.map { $0 < recorded[0] } ?? !takesIn), "\(context)")
            if plan.fold.isEmpty && plan.restoreFrom.isEmpty {
                #expect(folds.isEmpty, "\(context)")
            } else {
                #expect(folds.count == 1 && folds.first?.0 == plan.fold && folds.first?.1 == plan.restoreFrom, "\(context)")
            }
        default:
            Issue.record("unexpected plan \(checked.plan): \(context)")
        }
    }

    private static let foldResults: [CopyFolding.Result] = [.merged, .nothingNew, .deferred, .changedMeanwhile, .wouldMerge, .gone,
                                                             .otherCredentials, .otherDatabase, .unreadable, .tooLarge, .tooCostly]

    /// Whatever a fold of `plan` did, `settle` accounts for every copy folded: merged or retired
    /// (told, and its pending version retired), refused (remembered as failed, told once), or
    /// checked again (changed meanwhile, put off, a failure); every version restored is retired
    /// once the fold went through, and a restore a decision depends on that wrote nothing fails.
    private static func expectSettled(_ plan: Reconciler.Reconciliation, memory: inout Reconciler.Memory, _ random: inout SeededRandom,
                                      _ context: String) throws {
        let held = Bool.random(using: &random) ? Dictionary(uniqueKeysWithValues: plan.fold.map { ($0.path, "held-\($0.inode)") }) : [:]
        let wrote = Bool.random(using: &random)
        let outcome: Reconciler.FoldOutcome
        switch Int.random(in: 0..<6, using: &random) {
        case 0: outcome = .changedOnDisk
        case 1: outcome = .failed("merging into the vault: the disk is full")
        default:
            outcome = .folded(CopyFolding.Report(outcomes: plan.fold.map { copy in
                let result = foldResults[Int.random(in: 0..<foldResults.count, using: &random)]
                return CopyFolding.Outcome(copy: copy.path, engine: copy.engine, result: result, changes: [], movedTo: "/kept/\(copy.inode)")
            }, wroteVault: wrote))
        }
        let settled = Reconciler.settle(outcome, of: plan, copiesHeld: held, vault: vaultPath, nextRoom: start, memory: &memory)
        let retired = settled.effects.compactMap { effect -> String? in if case .retire(let sha256) = effect { sha256 } else { nil } }
        let told = settled.effects.compactMap { effect -> WatchEvent? in if case .tell(let event, _) = effect { event } else { nil } }
        let context = "\(context), fold \(outcome)"
        guard case .folded(let report) = outcome else {
            #expect(settled.retryLater && retired.isEmpty, "a fold that did not go through retired something: \(context)")
            #expect((settled.failure != nil) == (outcome.isFailure || plan.takeInOnlyByRestore), "\(context)")
            return
        }
        #expect(Set(plan.restoreFrom).isSubset(of: Set(retired)), "a version merged back stays pending: \(context)")
        if plan.takeInOnlyByRestore && !wrote { #expect(settled.failure != nil && settled.retryLater, "\(context)") }
        for folded in report.outcomes {
            let copy = try #require(plan.fold.first { $0.path == folded.copy })
            let toldAbout = told.contains { event in
                switch event {
                case .conflictCopyMerged(_, let path, _, _, _), .conflictCopyRetired(_, let path, _), .conflictCopyLeft(_, let path, _): path == copy.path
                case .copiesWaiting(_, let copies, _): copies.contains(copy.path)
                default: false
                }
            }
            switch folded.result {
            case .merged, .nothingNew:
                #expect(toldAbout && memory.failedCopies[copy.path] == nil, "a copy folded in was not told about: \(context)")
                if let sha256 = held[copy.path] { #expect(retired.contains(sha256), "the copy's pending version stays: \(context)") }
            case .otherCredentials, .otherDatabase, .unreadable, .tooLarge, .tooCostly:
                #expect(memory.failedCopies[copy.path] == copy && !retired.contains(held[copy.path] ?? "-"), "\(context)")
                #expect(toldAbout || memory.reportedCopies.contains(copy.path), "a refused copy was never told: \(context)")
                // Told once: the same refusal again is not told again.
                let again = Reconciler.settle(outcome, of: plan, copiesHeld: held, vault: vaultPath, nextRoom: start, memory: &memory)
                #expect(!again.effects.contains { if case .tell(.conflictCopyLeft(_, copy.path, _), _) = $0 { true } else { false } },
                        "a refusal told twice: \(context)")
            case .deferred:
                #expect(settled.retryLater && settled.deferred && memory.failedCopies[copy.path] == nil, "\(context)")
            case .changedMeanwhile, .wouldMerge:
                #expect(settled.retryLater, "a copy changed meanwhile is not checked again: \(context)")
            case .gone:
                #expect(!toldAbout && memory.failedCopies[copy.path] == nil, "\(context)")
            }
        }
    }

    @Test("each wait is told once while it lasts: a transfer, a missing vault (then its return), a rollback held for its copy (then its refusal)")
    func waitsToldOnce() throws {
        var memory = Reconciler.Memory()
        let base = Self.version("b", try Self.original())
        func told(_ snapshot: FolderSnapshot, versions: Reconciler.Versions = .init(base: nil, disk: nil), at seconds: Double = 0,
                  policy: Reconciler.Policy = .init()) -> [WatchEvent] {
            Reconciler.check(snapshot, vault: Self.vaultPath, versions: versions, memory: &memory, now: Self.start.addingTimeInterval(seconds),
                             policy: policy).effects.compactMap { if case .tell(let event, _) = $0 { event } else { nil } }
        }
        let transfers = [".syncthing.vault.kdbx.tmp"]
        #expect(told(Self.snapshot(base, transfers: transfers)) == [.waitingForSync(vault: Self.vaultPath, transfers: transfers)])
        #expect(told(Self.snapshot(base, transfers: transfers)).isEmpty && Reconciler.awaitsTransfer(memory))
        #expect(told(Self.snapshot(nil)) == [.vaultMissing(vault: Self.vaultPath)] && !Reconciler.awaitsTransfer(memory))
        #expect(told(Self.snapshot(nil)).isEmpty)
        let back = Reconciler.vaultPresent(Self.vaultPath, memory: &memory).compactMap { if case .tell(let event, _) = $0 { event } else { nil } }
        #expect(back == [.vaultBack(vault: Self.vaultPath)] && Reconciler.vaultPresent(Self.vaultPath, memory: &memory).isEmpty)
        let older = Self.version("o", try Self.editing("A", in: base.vault, password: "old", at: -10))
        let newer = Self.version("n", try Self.editing("A", in: base.vault, password: "new", at: 10))
        let policy = Reconciler.Policy(rollbackHold: 60)
        let versions = Reconciler.Versions(base: newer, disk: older)
        #expect(told(Self.snapshot(older), versions: versions, policy: policy) == [.waitingForCopy(vault: Self.vaultPath, problem: .rollback(olderEntries: 1), hold: 60)])
        #expect(told(Self.snapshot(older), versions: versions, at: 30, policy: policy).isEmpty)
        #expect(told(Self.snapshot(older), versions: versions, at: 60, policy: policy)
                == [.refused(vault: Self.vaultPath, reason: .rollback(olderEntries: 1), version: older.sha256)])
    }

    /// Swift has no access level narrower than the module across files, so this test keeps the rule:
    /// the watcher reads the Reconciler's memory and hands it to Reconciler functions, never changes it.
    @Test("VaultWatcher changes the Reconciler's memory only through Reconciler functions")
    func watcherChangesNoMemory() throws {
        let path = #filePath.components(separatedBy: "/Tests/")[0] + "/Sources/SyncWatch/Watch/VaultWatcher.swift"
        let source = try String(contentsOfFile: path, encoding: .utf8)
            .replacingOccurrences(of: #"\n\s*"#, with: " ", options: .regularExpression)
        let changes = [#"memory\.\w+(\[[^\]]*\])?\s*(=[^=]|\+=|-=)"#, #"memory\.(copyFailed|firstReport|noteVaultFile)\("#,
                       #"memory\.\w+\.(append|insert|remove\w*|merge)\("#]
        for pattern in changes {
            let found = source.range(of: pattern, options: .regularExpression).map { String(source[$0]) }
            #expect(found == nil, "VaultWatcher changes the memory itself: \(found ?? "")")
        }
        var rest = Substring(source)
        while let handed = rest.range(of: "&memory") {
            let before = rest[..<handed.lowerBound]
            let call = before.range(of: "Reconciler.", options: .backwards).map { before[$0.upperBound...] }
            #expect(call.map { !$0.contains("{") && !$0.contains("}") && $0.count < 300 } == true,
                    "the memory handed to something other than a Reconciler function: \(before.suffix(120))")
            rest = rest[handed.upperBound...]
        }
    }

    @Test("copies: this device's own (inode the vault had) at once, another device's after its grace, a new copy of the same name starts its own")
    func copyGrace() throws {
        var memory = Reconciler.Memory()
        let base = Self.version("b", try Self.original())
        let policy = Reconciler.Policy(foreignCopyGrace: 30)
        _ = Reconciler.plan(Self.snapshot(base, inode: 5), versions: .init(base: base, disk: nil), memory: &memory, now: Self.start, policy: policy)
        let own = Self.copy("OWNOWNO", inode: 5), foreign = Self.copy("FOREIGN", inode: 6)
        var plan = Self.reconciliation(Reconciler.plan(Self.snapshot(base, inode: 8, copies: [own, foreign]), versions: .init(base: base, disk: nil),
                                                       memory: &memory, now: Self.start, policy: policy))
        #expect(plan?.fold == [own] && plan?.retryAt == Self.start.addingTimeInterval(30))
        plan = Self.reconciliation(Reconciler.plan(Self.snapshot(base, inode: 8, copies: [foreign]), versions: .init(base: base, disk: nil),
                                                   memory: &memory, now: Self.start.addingTimeInterval(29), policy: policy))
        #expect(plan?.fold == [])
        plan = Self.reconciliation(Reconciler.plan(Self.snapshot(base, inode: 8, copies: [foreign]), versions: .init(base: base, disk: nil),
                                                   memory: &memory, now: Self.start.addingTimeInterval(30), policy: policy))
        #expect(plan?.fold == [foreign] && plan?.retryAt == nil)
        // The same name, another file (inode reused, a new time): its own grace.
        let replaced = Self.copy("FOREIGN", inode: 6, modified: 99)
        plan = Self.reconciliation(Reconciler.plan(Self.snapshot(base, inode: 8, copies: [replaced]), versions: .init(base: base, disk: nil),
                                                   memory: &memory, now: Self.start.addingTimeInterval(31), policy: policy))
        #expect(plan?.fold == [] && plan?.retryAt == Self.start.addingTimeInterval(61))
    }

    @Test("a problem that keeps coming back is told once, until something else happened; a wait for a transfer is not something else")
    func problemToldOnce() {
        var memory = Reconciler.Memory()
        let failing = WatchEvent.error(vault: "/v.kdbx", message: "the disk is full")
        let told = [failing, failing, .waitingForSync(vault: "/v.kdbx", transfers: [".syncthing.v.kdbx.tmp"]), failing,
                    .error(vault: "/v.kdbx", message: "another problem"), .baseRecorded(vault: "/v.kdbx"), failing]
            .map { Reconciler.tells($0, memory: &memory) }
        #expect(told == [true, false, true, false, true, true, true])
    }

    @Test("the watcher's own write is recognised once when a check finds it on disk; another version is not it")
    func ownWriteSeenOnce() throws {
        var memory = Reconciler.Memory()
        let written = Self.version("w", try Self.original())
        let fingerprint = Fingerprint(device: 1, inode: 1, size: 100, modifiedSeconds: 0, modifiedNanoseconds: 0, sha256: written.sha256)
        Reconciler.wrote(fingerprint, in: &memory)
        let other = Self.version("o", try Self.original())
        var plan = Self.reconciliation(Reconciler.plan(Self.snapshot(other), versions: .init(base: other, disk: nil), memory: &memory,
                                                       now: Self.start, policy: .init()))
        #expect(plan?.ownWriteSeen == false)
        for expected in [true, false] {
            plan = Self.reconciliation(Reconciler.plan(Self.snapshot(written), versions: .init(base: written, disk: nil), memory: &memory,
                                                       now: Self.start, policy: .init()))
            #expect(plan?.ownWriteSeen == expected)
        }
    }

    @Test("copies put off for the spent allowance: retried, never remembered as failed, told once until a fold puts none off")
    func deferredCopies() {
        var memory = Reconciler.Memory()
        let first = Self.copy("PLANTED", inode: 7), second = Self.copy("PLANTE2", inode: 8)
        var plan = Reconciler.Reconciliation()
        plan.fold = [first, second]
        func outcome(_ copy: CopyFile, _ result: CopyFolding.Result) -> CopyFolding.Outcome {
            CopyFolding.Outcome(copy: copy.path, engine: copy.engine, result: result, changes: [], movedTo: nil)
        }
        var applied = Reconciler.apply([outcome(first, .deferred), outcome(second, .deferred)], of: plan, to: &memory)
        #expect(applied.retryLater && memory.failedCopies.isEmpty)
        guard case .waiting(let copies)? = applied.notices.first, applied.notices.count == 1 else { Issue.record("\(applied.notices)"); return }
        #expect(copies == [first.path, second.path])
        applied = Reconciler.apply([outcome(first, .deferred)], of: plan, to: &memory)
        #expect(applied.retryLater && applied.notices.isEmpty, "told again while still waiting")
        applied = Reconciler.apply([outcome(first, .merged)], of: plan, to: &memory)
        applied = Reconciler.apply([outcome(second, .deferred)], of: plan, to: &memory)
        #expect(applied.notices.count == 1, "a new wait after a fold that put nothing off is told")
    }

    @Test("a fold's outcomes applied to memory: merged copies forgotten as failed, refused ones remembered and told once, a copy changed meanwhile retried")
    func foldOutcomesApplied() throws {
        var memory = Reconciler.Memory()
        let good = Self.copy("GOODGOO", inode: 3), junk = Self.copy("JUNKJUN", inode: 4), moving = Self.copy("MOVINGG", inode: 5)
        memory.copyFailed(good, reason: .tooCostly)
        var plan = Reconciler.Reconciliation()
        plan.fold = [good, junk, moving]
        func outcome(_ copy: CopyFile, _ result: CopyFolding.Result) -> CopyFolding.Outcome {
            CopyFolding.Outcome(copy: copy.path, engine: copy.engine, result: result, changes: [], movedTo: result == .merged ? "/kept" : nil)
        }
        let outcomes = [outcome(good, .merged), outcome(junk, .otherDatabase), outcome(moving, .changedMeanwhile)]
        var applied = Reconciler.apply(outcomes, of: plan, to: &memory)
        #expect(applied.retryLater)
        #expect(memory.failedCopies[good.path] == nil && memory.failedCopies[junk.path] == junk)
        #expect(memory.failure(of: junk.path) == .otherDatabase)
        let told = applied.notices.compactMap { notice -> String? in
            switch notice {
            case .merged(let merged): "merged \(merged.copy)"
            case .retired: nil
            case .left(let copy, let reason): "left \(copy) \(reason.rawValue)"
            case .waiting(let copies): "waiting \(copies)"
            }
        }
        #expect(told == ["merged \(good.path)", "left \(junk.path) otherDatabase"])
        // The same refusal again is not told again; without a changed copy or a grace, nothing is retried.
        applied = Reconciler.apply([outcome(junk, .otherDatabase)], of: plan, to: &memory)
        #expect(applied.notices.isEmpty && !applied.retryLater)
        // A copy the sync engine removed before it was read (another device merged it) is neither
        // a refusal nor remembered: nothing told, nothing retried.
        let taken = Self.copy("TAKENAW", inode: 6)
        applied = Reconciler.apply([outcome(taken, .gone)], of: plan, to: &memory)
        #expect(applied.notices.isEmpty && !applied.retryLater && memory.failedCopies[taken.path] == nil)
    }

    @Test("a copy that failed is not tried again until it changes; the report policy reports each copy once; ignore ignores")
    func failedReportedIgnored() throws {
        var memory = Reconciler.Memory()
        let base = Self.version("b", try Self.original())
        let junk = Self.copy("JUNKJUN", inode: 3)
        memory.copyFailed(junk, reason: .unreadable)
        var plan = Self.reconciliation(Reconciler.plan(Self.snapshot(base, copies: [junk]), versions: .init(base: base, disk: nil),
                                                       memory: &memory, now: Self.start, policy: .init()))
        #expect(plan?.fold == [])
        let changed = Self.copy("JUNKJUN", inode: 3, modified: 5)
        plan = Self.reconciliation(Reconciler.plan(Self.snapshot(base, copies: [changed]), versions: .init(base: base, disk: nil),
                                                   memory: &memory, now: Self.start, policy: .init()))
        #expect(plan?.fold == [changed])
        var reports = Reconciler.Memory()
        for expected in [1, 0] {
            plan = Self.reconciliation(Reconciler.plan(Self.snapshot(base, copies: [junk]), versions: .init(base: base, disk: nil),
                                                       memory: &reports, now: Self.start, policy: .init(copies: .report)))
            #expect(plan?.report.count == expected && plan?.fold == [])
        }
        plan = Self.reconciliation(Reconciler.plan(Self.snapshot(base, copies: [junk]), versions: .init(base: base, disk: nil),
                                                   memory: &reports, now: Self.start, policy: .init(copies: .ignore)))
        #expect(plan?.isEmpty == true)
    }

    /// Two devices that each hold a version the other lacks only in access times or form: neither
    /// may restore (a restore answered by a restore is a write every scan, forever).
    @Test("a version that differs only in access times and usage counts is contained: no restore")
    func accessTimesAreNotContent() throws {
        var memory = Reconciler.Memory()
        let base = Self.version("b", try Self.original())
        var touched = base.vault
        touched.root.entries[0].times.lastAccessed = Timestamp(unixSeconds: 1_900_000_000)
        touched.root.entries[0].times.usageCount += 3
        let disk = Self.version("d", touched)
        let plan = Self.reconciliation(Reconciler.plan(Self.snapshot(disk), versions: .init(base: base, disk: disk, pending: []),
                                                       memory: &memory, now: Self.start, policy: .init()))
        #expect(plan?.restoreFrom == [])
        let back = Self.reconciliation(Reconciler.plan(Self.snapshot(base), versions: .init(base: disk, disk: base), memory: &memory,
                                                       now: Self.start, policy: .init()))
        #expect(back?.restoreFrom == [], "the version with later access times is not content the other lacks")
    }

    @Test("a vault renamed aside with the other version (rclone bisync): rebuilt where the copy is this device's own file, by inode and birth time")
    func rebuildWhereRenamed() throws {
        var memory = Reconciler.Memory(vaultFiles: [Self.vaultFile(inode: 7, born: -50)])
        let own = Self.renamedAside(1, inode: 7, born: -50), other = Self.renamedAside(2, inode: 9, born: 1)
        let plan = Reconciler.plan(FolderSnapshot(vault: .missing, copies: [other, own]), versions: .init(base: nil, disk: nil), memory: &memory,
                                   now: Self.start.addingTimeInterval(2), policy: .init())
        guard case .rebuild(let from) = plan else { Issue.record("not rebuilt: \(plan)"); return }
        #expect(from == own)
        // Another policy for copies: nothing is rebuilt, the vault is only missing.
        guard case .wait(.vaultMissing) = Reconciler.plan(FolderSnapshot(vault: .missing, copies: [other, own]), versions: .init(base: nil, disk: nil),
                                                          memory: &memory, now: Self.start, policy: .init(copies: .report)) else {
            Issue.record("rebuilt with the report policy"); return
        }
        // Copies of an engine that keeps one version as the vault are no reason to rebuild.
        guard case .wait(.vaultMissing) = Reconciler.plan(FolderSnapshot(vault: .missing, copies: [Self.copy("OTHER", inode: 7)]),
                                                          versions: .init(base: nil, disk: nil), memory: &memory, now: Self.start, policy: .init()) else {
            Issue.record("rebuilt from a Syncthing copy"); return
        }
    }

    @Test("copies that only arrived here (an inode the vault had, reused by a new file: another birth time) wait for the other device until the rebuild grace ends")
    func receivedCopiesWait() throws {
        var memory = Reconciler.Memory(vaultFiles: [Self.vaultFile(inode: 7, born: -50)])
        let reused = Self.renamedAside(1, inode: 7, born: 10), other = Self.renamedAside(2, inode: 9, born: 12)
        let snapshot = FolderSnapshot(vault: .missing, copies: [reused, other])
        let policy = Reconciler.Policy(rebuildGrace: 600)
        let waiting = Reconciler.plan(snapshot, versions: .init(base: nil, disk: nil), memory: &memory, now: Self.start.addingTimeInterval(20), policy: policy)
        guard case .wait(.rebuildElsewhere(let copies, let until)) = waiting else { Issue.record("not waiting: \(waiting)"); return }
        #expect(copies == [reused.path, other.path])
        #expect(until == Self.start.addingTimeInterval(612))  // the later arrival, plus the grace
        let due = Reconciler.plan(snapshot, versions: .init(base: nil, disk: nil), memory: &memory, now: Self.start.addingTimeInterval(612), policy: policy)
        guard case .rebuild(let from) = due else { Issue.record("not rebuilt after the grace: \(due)"); return }
        #expect(from == reused)
        // Without birth times no copy is known to be the vault's file, not even one of the same inode,
        // size and time (rclone keeps a transferred file's time); the grace counts from when this
        // watcher first saw it (a listing gives the ctime).
        var fresh = Reconciler.Memory(vaultFiles: [Self.vaultFile(inode: 7, born: nil)])
        let unborn = FolderSnapshot(vault: .missing, copies: [Self.renamedAside(1, inode: 7, born: nil)])
        let first = Reconciler.plan(unborn, versions: .init(base: nil, disk: nil), memory: &fresh, now: Self.start, policy: policy)
        guard case .wait(.rebuildElsewhere(_, let later)) = first else { Issue.record("\(first)"); return }
        #expect(later == Self.start.addingTimeInterval(600))
    }

    @Test("the vault's file identity is remembered at each check, so its copy is recognised after the vault is gone")
    func vaultFileRemembered() throws {
        var memory = Reconciler.Memory()
        let base = Self.version("b", try Self.original())
        let identity = Self.vaultFile(inode: 3, born: -5)
        _ = Reconciler.plan(FolderSnapshot(vault: .present(Fingerprint(device: 1, inode: 3, size: 100, modifiedSeconds: 0, modifiedNanoseconds: 0,
                                                                        sha256: base.sha256)), vaultIdentity: identity),
                            versions: .init(base: base, disk: nil), memory: &memory, now: Self.start, policy: .init())
        #expect(memory.vaultFiles.last == identity)
        let plan = Reconciler.plan(FolderSnapshot(vault: .missing, copies: [Self.renamedAside(1, inode: 3, born: -5)]), versions: .init(base: nil, disk: nil),
                                   memory: &memory, now: Self.start, policy: .init())
        guard case .rebuild = plan else { Issue.record("\(plan)"); return }
    }
}

extension Reconciler.FoldOutcome {
    /// Whether the fold failed outright.
    var isFailure: Bool { if case .failed = self { true } else { false } }
}

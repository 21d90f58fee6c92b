import Foundation
import KDBXFormat
import MyPassCore
import MyPassCrypto
import Testing

/// What `Helpers/syncthing_group.py` reports about one run of two or three real Syncthing instances.
private struct SyncthingRun: Decodable {
    struct Edit: Decodable {
        let device: String
        let tool: String
        let title: String
        let field: String
        let value: String
        let round: Int
        let status: Int32
        let stderr: String?
        let unixTime: Double
        /// The edit failed at first because the entry was missing for a moment, and was tried again.
        let retried: Bool?
    }

    /// A watcher's JSON line (the evidence), with the device and the event's time.
    struct WatcherLine: Decodable {
        let device: String
        let time: String?
        let line: String
    }

    /// A watcher write (`restored`, `conflictCopyMerged`) whose change list is empty.
    struct EmptyWrite: Decodable {
        let device: String
        let kind: String
        let time: String?
        let line: String
        let sameSecondAsAChangingMerge: Bool?
    }

    struct Restore: Decodable {
        let device: String
        let time: String?
        let changes: Int
        let line: String
    }

    /// One round: the devices that edited at once (k of them: k - 1 real conflicts) and the copies
    /// first seen between its start and the next round's. `isolated`: the folder was quiet before
    /// it and after it, so that its copies are its own.
    struct Round: Decodable {
        let round: Int
        let devices: [String]
        let realConflicts: Int
        let copies: [String]
        let copiesWithNothingNew: [String]
        let isolated: Bool
        let quietAfter: Bool?
        let secondsFromLastEditToQuiet: Double?
        let secondsFromLastCopyToQuiet: Double?
    }

    struct CopiesPerConflict: Decodable {
        let realConflicts: Int
        let copies: Int
        let copiesWithNothingNew: Int
        let rounds: [Round]
    }

    struct Sighting: Decodable {
        let at: Double
        let sha256: String
    }

    let devices: Int
    let delay: Int
    let pattern: String
    let rounds: Int
    let seed: Int
    let edits: [Edit]
    let errors: [String]
    let peerAddresses: [String?]?
    let nonDefaultFolderSettingNames: [String]?
    let quiet: Bool?
    let secondsFromLastEditToQuiet: Double?
    let secondsFromLastCopyToQuiet: Double?
    let copiesAfterLastEdit: [String]?
    let copies: [String]?
    let copiesWithNothingNew: [String]?
    let copiesPerConflict: CopiesPerConflict?
    let copiesDifferingByDevice: [String]?
    let sameNamedCopies: [String: [String: Sighting]]?
    let copiesReportedLeft: [WatcherLine]?
    let eventCounts: [String: [String: Int]]?
    let emptyWrites: [EmptyWrite]
    let restores: [Restore]
    let leftInFolders: [String: [String]]?
    let vaultWrites: [String: Int]?
    let finalVaultSha256: [String: String?]?
    let syncthingNotRescanned: Int?
    let staleTemporaries: [String]?
    let seconds: Double?
    let folders: [String]
}

/// Two or three devices whose vault folder is shared by the real Syncthing (the Debian package,
/// every device with every other, at Syncthing's default settings but for the watcher delay under
/// test), a `mypass-sync watch` on each, edits with mypass-sync and keepassxc-cli on one device,
/// several or all at once. Syncthing makes a conflict copy when devices changed the vault at once;
/// the watchers fold it in. Nothing may be lost, the devices must end with the same bytes, a merge
/// that changes nothing must write nothing (or the devices' rewrites of the same merge are new
/// conflicts: a storm of copies that never settles), and a real conflict may cause at most one more
/// copy. The cases run one after the other: each device stands for a machine of its own, and ten
/// Syncthing instances with their watchers on two cores at once made same-second races far likelier
/// than on real devices (the suite takes about 8 minutes, beside the rest of the tests).
@Suite("real Syncthing: two or three devices, a watcher on each, no lost edit and no storm of conflict copies", .serialized)
struct RealSyncthingTests {
    private func run(devices: Int, delay: Int, pattern: String, rounds: Int = 0, daemon: Bool = false) throws -> (SyncthingRun, URL) {
        let root = try CLIFixtures.scratch()
        let report: SyncthingRun = try ToolRunner.helperReport(
            "syncthing_group.py", ["--root", root.path, "--vault", CLIFixtures.kdbx31, "--devices", "\(devices)", "--delay", "\(delay)",
                                   "--pattern", pattern, "--rounds", "\(rounds)", "--quiet-timeout", "\(6 * delay + 60)"]
                                   + (daemon ? ["--daemon"] : []) + ["--binary"], [],
            input: CLIFixtures.kdbx31Password + "\n")
        return (report, root)
    }

    /// The checks every configuration must pass; prints the figures.
    private func check(_ report: SyncthingRun, root: URL) throws {
        // MYPASS_SYNCTHING_KEEP leaves the folders, Syncthing homes and logs for a look.
        defer { if ProcessInfo.processInfo.environment["MYPASS_SYNCTHING_KEEP"] == nil { try? FileManager.default.removeItem(at: root) } }
        let name = "\(report.devices) devices, watcher delay \(report.delay) s, \(report.pattern), seed \(report.seed)"
        #expect(report.errors.isEmpty, "\(name): \(report.errors)")
        let pairs = report.devices * (report.devices - 1)
        #expect(report.peerAddresses?.count == pairs && report.peerAddresses?.allSatisfy { $0?.hasPrefix("127.0.0.1:") == true } == true,
                "\(name): the Syncthing peers did not all connect over loopback: \(String(describing: report.peerAddresses))")
        #expect(Set(report.nonDefaultFolderSettingNames ?? ["unknown"]).isSubset(of: ["fsWatcherDelayS"]),
                "\(name): folder settings other than Syncthing's defaults: \(String(describing: report.nonDefaultFolderSettingNames))")
        let failed = report.edits.filter { $0.status != 0 }
        #expect(failed.isEmpty, "\(name): edits failed: \(failed.map { "\($0.tool) on \($0.device): \($0.stderr ?? "")" })")
        #expect(report.edits.contains { $0.tool == "keepassxc-cli" } && report.edits.contains { $0.tool == "mypass-sync" })
        #expect(report.quiet == true, "\(name): the folder never went quiet after the last edit")

        // Every device ends with the same file, and nothing beside it.
        let finals = try report.folders.map { try Data(contentsOf: URL(fileURLWithPath: $0).appendingPathComponent("vault.kdbx")) }
        #expect(finals.count == report.devices && Set(finals).count == 1, "\(name): the devices do not hold the same vault")
        let final = try #require(finals.first, "\(name): no vault to check")
        let hashes = report.finalVaultSha256 ?? [:]
        #expect(hashes.count == report.devices && Set(hashes.values).count == 1 && hashes.values.first == SHA256.hexHash(final),
                "\(name): final vaults' SHA-256 differ: \(hashes)")
        #expect(report.leftInFolders?.values.allSatisfy(\.isEmpty) == true, "\(name): left beside the vault: \(String(describing: report.leftInFolders))")

        // Every value ever set is current or in the entry's history; one missing from an entry whose
        // history is full (HistoryMaxItems) and holds only versions as new as the edit was dropped
        // by that limit, not by a merge.
        let vault = try KDBXReader.open(final, key: try CompositeKey(password: CLIFixtures.kdbx31Password)).vault
        var missing: [String] = []
        var dropped: [String] = []
        for edit in report.edits where edit.status == 0 {
            let entries = vault.root.allEntries().map(\.entry).filter { $0.title == edit.title }
            if entries.flatMap({ [$0] + $0.history }).contains(where: { $0.text(edit.field) == edit.value }) { continue }
            let text = "\(edit.title) \(edit.field) \(edit.value) (\(edit.tool) on \(edit.device), round \(edit.round))"
            let full = entries.filter { vault.meta.historyMaxItems >= 0 && $0.history.count >= vault.meta.historyMaxItems }
            if !full.isEmpty, full.allSatisfy({ $0.history.allSatisfy { $0.times.lastModified.unixSeconds >= Int64(edit.unixTime) - 1 } }) {
                dropped.append(text)
            } else {
                missing.append(text)
            }
        }
        #expect(missing.isEmpty, """
            \(name): values lost: \(missing); copies of one name made on several devices at once: \
            \((report.sameNamedCopies ?? [:]).map { "\($0.key) \($0.value.mapValues { "+\($0.at) s \($0.sha256.prefix(8))" })" }.sorted())
            """)

        // A merge or restore that changed nothing wrote the vault for nothing.
        #expect(report.emptyWrites.isEmpty, "\(name): watcher writes with an empty change list: \(report.emptyWrites.map { "\($0.device): \($0.line)" })")

        // At most one extra copy per real conflict: in a round alone in a quiet folder, at most two
        // copies per real conflict (k devices at once: k - 1), none without one; over the whole run
        // too. A copy may carry nothing new because its device already put its version back from its
        // own kept versions (the copy is the second route): that is not a storm, so it is not counted
        // against the copies that carried something.
        let perConflict = try #require(report.copiesPerConflict)
        for round in perConflict.rounds where round.isolated {
            #expect(round.copies.count <= 2 * round.realConflicts,
                    "\(name): round \(round.round) (\(round.devices.joined(separator: ", ")) at once, \(round.realConflicts) real conflicts): \(round.copies)")
        }
        #expect(perConflict.copies <= 2 * perConflict.realConflicts,
                "\(name): \(perConflict.copies) copies for \(perConflict.realConflicts) real conflicts (\(perConflict.copiesWithNothingNew) carried nothing new)")

        // Quiet within the watcher delay, the debounce and a few seconds of the last copy: after the
        // last round, and after every round that made copies and was waited for.
        let bound = Double(report.delay) + 0.3 + 8
        let quietAfterCopy = report.secondsFromLastCopyToQuiet ?? .infinity
        #expect(quietAfterCopy <= bound, "\(name): quiet \(quietAfterCopy) s after the last copy")
        for round in perConflict.rounds where !round.copies.isEmpty {
            if let seconds = round.secondsFromLastCopyToQuiet {
                #expect(seconds <= bound, "\(name): quiet \(seconds) s after round \(round.round)'s last copy")
            }
        }
        print("""
            real Syncthing, \(name): \(report.rounds) rounds\(report.pattern == "random" ? " + 1 on every device at once" : ""), \
            \(report.edits.count) edits (\(report.edits.filter { $0.tool == "keepassxc-cli" }.count) with keepassxc-cli, \
            \(report.edits.filter { $0.retried == true }.count) tried again after the entry was missing for a moment), \
            \(perConflict.copies) conflict copies for \(perConflict.realConflicts) real conflicts (\(perConflict.copiesWithNothingNew) carried \
            nothing new; per isolated round \(perConflict.rounds.filter(\.isolated).map { "\($0.round): \($0.copies.count)/\($0.realConflicts)" })), \
            \(report.copiesAfterLastEdit?.count ?? 0) after the last round began; quiet \(report.secondsFromLastEditToQuiet ?? -1) s after \
            the last edit (\(quietAfterCopy) s after the last copy); watcher events \(report.eventCounts ?? [:]); empty writes \
            \(report.emptyWrites.count), restores \(report.restores.map { "\($0.device) \($0.time ?? "") \($0.changes) change(s)" }); values \
            dropped by HistoryMaxItems \(dropped.count); same-named copies with different bytes \(report.copiesDifferingByDevice ?? []); \
            copies a watcher could not read (gone meanwhile?) \(report.copiesReportedLeft?.count ?? 0); vault writes by the watchers \
            \(report.vaultWrites ?? [:]); Syncthing 'modified but not rescanned' \(report.syncthingNotRescanned ?? -1), temporary files of \
            abandoned pulls \(report.staleTemporaries ?? []); \(report.seconds ?? -1) s
            """)
    }

    private static func rounds(_ variable: String, default value: Int) -> Int {
        Int(ProcessInfo.processInfo.environment[variable] ?? "") ?? value
    }

    @Test("2 devices, Syncthing's default watcher delay (10 s), a few random edits, the last on both at once: settles")
    func defaultDelay() throws {
        let (report, root) = try run(devices: 2, delay: 10, pattern: "random", rounds: Self.rounds("MYPASS_SYNCTHING_SLOW_ROUNDS", default: 3))
        try check(report, root: root)
    }

    @Test("2 devices at the default delay: both change one password at once, then A edits another entry, then B adds one")
    func twoDevicesThreeRounds() throws {
        let (report, root) = try run(devices: 2, delay: 10, pattern: "three-round")
        try check(report, root: root)
    }

    @Test("3 devices at the default delay: all change one password at once, then A edits another entry, then B adds one")
    func threeDevicesThreeRounds() throws {
        let (report, root) = try run(devices: 3, delay: 10, pattern: "three-round")
        try check(report, root: root)
    }

    @Test("2 devices, each running `daemon run` instead of `watch` (short delay, three rounds): settles, nothing lost")
    func twoDevicesWithDaemons() throws {
        let (report, root) = try run(devices: 2, delay: 1, pattern: "three-round", daemon: true)
        try check(report, root: root)
    }

    /// MYPASS_SYNCTHING_GROUP_ROUNDS raises the rounds for a soak run.
    @Test("3 devices, a short watcher delay (1 s), random rounds on one, two or all three at once: settles, nothing lost")
    func threeDevicesShortDelay() throws {
        let (report, root) = try run(devices: 3, delay: 1, pattern: "random", rounds: Self.rounds("MYPASS_SYNCTHING_GROUP_ROUNDS", default: 12))
        try check(report, root: root)
    }
}

import Foundation
import KDBXFormat
import MyPassCore
import Testing

/// What `Helpers/syncthing_pair.py` reports about one run of two real Syncthing instances.
private struct SyncthingRun: Decodable {
    struct Edit: Decodable {
        let device: String
        let tool: String
        let title: String
        let field: String
        let value: String
        let status: Int32
        let stderr: String?
    }

    let delay: Int
    let rounds: Int
    let edits: [Edit]
    let errors: [String]
    let peerAddresses: [String?]?
    let quiet: Bool?
    let secondsFromLastEditToQuiet: Double?
    let secondsFromLastCopyToQuiet: Double?
    let copiesAfterLastEdit: [String]?
    let copies: [String]?
    let copiesWithNothingNew: [String]?
    let leftInFolders: [String: [String]]?
    let vaultWrites: [String: Int]?
    let syncthingNotRescanned: Int?
    let staleTemporaries: [String]?
    let folders: [String]
}

/// Two devices whose vault folder is shared by the real Syncthing (the Debian package), a
/// `mypass-sync watch` on each, edits with mypass-sync and keepassxc-cli on one device or both at
/// once. Syncthing makes a conflict copy when both changed the vault; the watchers fold it in. A
/// merge that changes nothing must write nothing, or the two devices' rewrites of the same merge are
/// a new conflict: a storm of copies that never settles.
@Suite("real Syncthing: two devices, two watchers, no storm of conflict copies", .serialized)
struct RealSyncthingTests {
    private func run(delay: Int, rounds: Int) throws -> (SyncthingRun, URL) {
        let root = try CLIFixtures.scratch()
        let report: SyncthingRun = try ToolRunner.helperReport(
            "syncthing_pair.py", ["--root", root.path, "--vault", CLIFixtures.kdbx31, "--delay", "\(delay)", "--rounds", "\(rounds)",
                                  "--quiet-timeout", "\(6 * delay + 60)", "--binary"], [],
            input: CLIFixtures.kdbx31Password + "\n")
        return (report, root)
    }

    /// The checks every configuration must pass; prints the figures.
    private func check(_ report: SyncthingRun, root: URL) throws {
        // MYPASS_SYNCTHING_KEEP leaves the folders, Syncthing homes and logs for a look.
        defer { if ProcessInfo.processInfo.environment["MYPASS_SYNCTHING_KEEP"] == nil { try? FileManager.default.removeItem(at: root) } }
        #expect(report.errors.isEmpty, "\(report.errors)")
        #expect(report.peerAddresses?.count == 2 && report.peerAddresses?.allSatisfy { $0?.hasPrefix("127.0.0.1:") == true } == true,
                "the Syncthing peers did not connect over loopback: \(String(describing: report.peerAddresses))")
        let failed = report.edits.filter { $0.status != 0 }
        #expect(failed.isEmpty, "edits failed: \(failed.map { "\($0.tool) on \($0.device): \($0.stderr ?? "")" })")
        #expect(report.edits.contains { $0.tool == "keepassxc-cli" } && report.edits.contains { $0.tool == "mypass-sync" })
        #expect(report.quiet == true, "the folder never went quiet after the last edit")
        // Both devices end with the same file, and nothing beside it.
        let finals = try report.folders.map { try Data(contentsOf: URL(fileURLWithPath: $0).appendingPathComponent("vault.kdbx")) }
        #expect(finals.count == 2 && finals[0] == finals[1], "the two devices do not hold the same vault")
        #expect(report.leftInFolders?.values.allSatisfy(\.isEmpty) == true, "left beside the vault: \(String(describing: report.leftInFolders))")
        // Every value ever set is current or in the entry's history.
        let vault = try KDBXReader.open(finals[0], key: try CompositeKey(password: CLIFixtures.kdbx31Password)).vault
        var missing: [String] = []
        for edit in report.edits where edit.status == 0 {
            let versions = vault.root.allEntries().map(\.entry).filter { $0.title == edit.title }.flatMap { [$0] + $0.history }
            if !versions.contains(where: { $0.text(edit.field) == edit.value }) { missing.append("\(edit.title) \(edit.field) \(edit.value)") }
        }
        #expect(missing.isEmpty, "values lost: \(missing)")
        // The last round was one simultaneous edit on both devices: one real conflict, whose copy may
        // cause at most one more; then the folder is quiet within a watcher delay and a few seconds.
        let afterLast = report.copiesAfterLastEdit ?? []
        #expect(afterLast.count <= 2, "copies after the last edit: \(afterLast)")
        let quietAfterCopy = report.secondsFromLastCopyToQuiet ?? .infinity
        #expect(quietAfterCopy <= Double(report.delay) + 0.3 + 8, "quiet \(quietAfterCopy) s after the last copy")
        print("""
            real Syncthing, watcher delay \(report.delay) s, \(report.rounds) rounds + 1 simultaneous last round: \(report.edits.count) edits \
            (\(report.edits.filter { $0.tool == "keepassxc-cli" }.count) with keepassxc-cli), \(report.copies?.count ?? 0) conflict copies \
            (\(report.copiesWithNothingNew?.count ?? 0) carried nothing new), \(afterLast.count) after the last edit; quiet \
            \(report.secondsFromLastEditToQuiet ?? -1) s after the last edit (\(quietAfterCopy) s after the last copy); vault writes by the \
            watchers \(report.vaultWrites ?? [:]); Syncthing 'modified but not rescanned' \(report.syncthingNotRescanned ?? -1), \
            temporary files of abandoned pulls left by Syncthing \(report.staleTemporaries ?? [])
            """)
    }

    @Test("Syncthing's default watcher delay (10 s), a few edits, the last on both devices at once: settles")
    func defaultDelay() throws {
        let (report, root) = try run(delay: 10, rounds: Int(ProcessInfo.processInfo.environment["MYPASS_SYNCTHING_SLOW_ROUNDS"] ?? "") ?? 3)
        try check(report, root: root)
    }

    @Test("a short watcher delay (1 s), tens of random rounds on one device or both: settles, nothing lost")
    func shortDelay() throws {
        let (report, root) = try run(delay: 1, rounds: Int(ProcessInfo.processInfo.environment["MYPASS_SYNCTHING_ROUNDS"] ?? "") ?? 24)
        try check(report, root: root)
    }
}

import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Every version that did not come from this device is opened through one step with the foreign
/// budget: the rollback evidence, a rebuild candidate with no synced version to measure against, a
/// git blob for textconv. A KDF bomb (Argon2 2 GiB x 10,000: hours, within the caps for a vault the
/// user opens) planted on any of these paths is refused before any derivation.
@Suite("Versions from elsewhere: one opening step, one budget", .serialized)
struct ForeignBudgetTests {
    let input = CLIFixtures.kdbx4Password + "\n"

    /// A scratch folder with the Argon2 fixture as `pw.kdbx` and a state directory beside it.
    private func folder() throws -> (root: URL, vault: String, state: String) {
        let root = try CLIFixtures.scratch()
        let vault = root.appendingPathComponent("pw.kdbx").path
        try FileManager.default.copyItem(atPath: CLIFixtures.kdbx4, toPath: vault)
        chmod(vault, 0o600)
        return (root, vault, root.appendingPathComponent("state").path)
    }

    /// `mypass-sync ARGUMENTS` stopped after 60 s, and how long it took.
    private func timed(_ arguments: [String]) throws -> (outcome: ProcessRunner.Outcome, seconds: Double) {
        let started = Date()
        let outcome = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/timeout"), ["60", try ToolRunner.binary().path] + arguments,
                                            input: Data(input.utf8))
        return (outcome, Date().timeIntervalSince(started))
    }

    @Test("a rolled-back vault with a KDF bomb under a copy's name: the rollback evidence is read within the budget, refused at once, and not derived again")
    func rollbackEvidenceBomb() throws {
        let (root, vault, state) = try folder()
        defer { try? FileManager.default.removeItem(at: root) }
        let older = try Data(contentsOf: URL(fileURLWithPath: vault))
        let edited = try ToolRunner.run(["edit", "--password-stdin", "--state-dir", state, vault, "/No URL", "-u", "newer"], input: input)
        #expect(edited.status == 0, "\(edited.standardError)")
        try older.write(to: URL(fileURLWithPath: vault))
        let bomb = root.appendingPathComponent("pw.sync-conflict-20261130-101010-BOMBBOM.kdbx").path
        try KDFBomb.made(from: older).write(to: URL(fileURLWithPath: bomb))
        for run in 1...2 {
            let (watch, seconds) = try timed(["watch", "--once", "--json", "--password-stdin", "--state-dir", state, vault])
            #expect(seconds < 15, "run \(run): derived for the planted copy (\(seconds) s)")
            #expect(watch.output.contains("\"refused\""), "run \(run): \(watch.output)")
            #expect(!watch.output.contains("\"reloaded\""))
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: vault)) == older)
        #expect(FileManager.default.fileExists(atPath: bomb))
    }

    @Test("a vault renamed aside with only a KDF bomb as `..path1` and no synced version here: the rebuild is refused at once (grace 0), nothing written",
          arguments: ["pw.kdbx..path1", "pw.kdbx.conflict1"])
    func rebuildCandidateBomb(name: String) throws {
        let (root, vault, state) = try folder()
        defer { try? FileManager.default.removeItem(at: root) }
        let bytes = try Data(contentsOf: URL(fileURLWithPath: vault))
        try FileManager.default.removeItem(atPath: vault)
        let bomb = root.appendingPathComponent(name).path
        try KDFBomb.made(from: bytes).write(to: URL(fileURLWithPath: bomb))
        let (watch, seconds) = try timed(["watch", "--once", "--json", "--rebuild-grace", "0", "--password-stdin", "--state-dir", state, vault])
        #expect(seconds < 15, "derived for the planted candidate (\(seconds) s): \(watch.standardError)")
        #expect(!FileManager.default.fileExists(atPath: vault), "rebuilt from the bomb")
        #expect(FileManager.default.fileExists(atPath: bomb))
    }

    @Test("git textconv of a KDF-bomb blob is refused before any derivation (one line saying so, exit 0 so git log -p goes on); an ordinary vault is still shown")
    func textconvBomb() throws {
        let (root, vault, _) = try folder()
        defer { try? FileManager.default.removeItem(at: root) }
        let bomb = root.appendingPathComponent("blob.kdbx").path
        try KDFBomb.made(from: Data(contentsOf: URL(fileURLWithPath: vault))).write(to: URL(fileURLWithPath: bomb))
        let (refused, seconds) = try timed(["git", "textconv", "--password-stdin", "--", bomb])
        #expect(seconds < 10, "derived for the blob (\(seconds) s)")
        #expect(refused.status == 0, "\(refused.standardError)")
        let lines = refused.output.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].contains("cannot be shown") && lines[0].contains("exceed"), "\(refused.output)")
        let (shown, _) = try timed(["git", "textconv", "--password-stdin", "--", vault])
        #expect(shown.status == 0 && shown.output.contains("No URL"), "\(shown.standardError)")
    }

    @Test("every failed copy is remembered, however many (70 copies of another vault): those the vault's allowance left waiting are tried by the next run, the remembered ones never derived again")
    func manyFailedCopies() throws {
        let (root, vault, state) = try folder()
        defer { try? FileManager.default.removeItem(at: root) }
        let other = try Data(contentsOf: URL(fileURLWithPath: CLIFixtures.kdbx31))
        for index in 0..<70 {
            try other.write(to: root.appendingPathComponent(String(format: "pw.sync-conflict-20261130-1010%02d-OTHERCR.kdbx", index)))
        }
        func rememberedCount() throws -> Int {
            let remembered = try #require(try FileManager.default.contentsOfDirectory(atPath: state).first { $0.hasSuffix(".failed-copies.json") })
            let failures = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: state + "/" + remembered))) as? [String: Any]
            return failures?.count ?? 0
        }
        /// How many copies a run's `copiesWaiting` line says wait (0 without one).
        func waiting(in output: String) -> Int {
            guard let line = output.split(separator: "\n").first(where: { $0.contains("\"copiesWaiting\"") }),
                  let range = line.range(of: #"\d+ conflict cop"#, options: .regularExpression) else { return 0 }
            return Int(line[range].prefix { $0.isNumber }) ?? 0
        }
        let (first, _) = try timed(["watch", "--once", "--json", "--password-stdin", "--state-dir", state, vault])
        let leftFirst = first.output.components(separatedBy: "otherCredentials").count - 1
        #expect(leftFirst >= 1 && leftFirst + waiting(in: first.output) == 70, "left \(leftFirst), waiting \(waiting(in: first.output))")
        #expect(try rememberedCount() == leftFirst, "every failed copy remembered")
        // The next run derives only the copies that waited; the remembered ones are reported, not opened.
        let (second, _) = try timed(["watch", "--once", "--json", "--password-stdin", "--state-dir", state, vault])
        #expect(second.output.components(separatedBy: "conflictCopyLeft").count - 1 == 70 && waiting(in: second.output) == 0,
                "\(second.output.prefix(600))")
        #expect(try rememberedCount() == 70, "remembered \((try? rememberedCount()) ?? 0) of 70")
    }
}

import Foundation
import Testing
import TestSupport

/// Real Unison (2.52) between two roots in batch mode with mypass-sync as the merge program for
/// `*.kdbx`, given both versions and, when Unison kept one, the last synchronised version.
@Suite("Unison: mypass-sync merge as the merge program (real Unison)", .serialized)
struct UnisonMergeTests {
    final class Roots {
        let root: URL
        let one: URL, two: URL
        let passwordFile: String
        let environment: [String: String]

        init() throws {
            root = try CLIFixtures.scratch()
            one = root.appendingPathComponent("one")
            two = root.appendingPathComponent("two")
            for folder in [one, two, root.appendingPathComponent("home")] {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            }
            try FileManager.default.copyItem(atPath: CLIFixtures.kdbx4, toPath: one.appendingPathComponent("vault.kdbx").path)
            try FileManager.default.copyItem(atPath: CLIFixtures.kdbx4, toPath: two.appendingPathComponent("vault.kdbx").path)
            passwordFile = root.appendingPathComponent("pw.txt").path
            try Data((ScratchVault.password + "\n").utf8).write(to: URL(fileURLWithPath: passwordFile))
            environment = ["HOME": root.appendingPathComponent("home").path]
        }

        deinit { try? FileManager.default.removeItem(at: root) }

        /// One `unison` run in batch mode with the merge line of docs/engines/unison.md.
        @discardableResult
        func sync() throws -> ProcessRunner.Outcome {
            let merge = "Name *.kdbx -> \(try ToolRunner.binary().path) merge --base=CURRENTARCHOPT -o NEW "
                + "--password-command 'cat \(passwordFile)' --state-dir \(root.appendingPathComponent("state").path) -- CURRENT1 CURRENT2"
            return try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/unison"),
                                         [one.path, two.path, "-batch", "-auto", "-merge", merge, "-backupcurrent", "Name *.kdbx"],
                                         environment: environment)
        }

        func edit(_ folder: URL, _ arguments: [String]) throws {
            let outcome = try ToolRunner.run(["edit", folder.appendingPathComponent("vault.kdbx").path, "/No URL"] + arguments
                                             + ["--password-command", "cat '\(passwordFile)'", "--state-dir", folder.path + "-state"])
            #expect(outcome.status == 0, "\(outcome.standardError)")
        }

        func show(_ folder: URL) throws -> String {
            try ToolRunner.run(["show", folder.appendingPathComponent("vault.kdbx").path, "/No URL", "--password-command", "cat '\(passwordFile)'"])
                .standardOutput
        }

        func bytes(_ folder: URL) throws -> Data { try Data(contentsOf: folder.appendingPathComponent("vault.kdbx")) }
    }

    @Test("concurrent edits of one entry on both roots: one unison run leaves the field-level merge on both, without an archive (first sync) and with one",
          arguments: [false, true])
    func merges(withArchive: Bool) throws {
        let roots = try Roots()
        if withArchive {
            let first = try roots.sync()  // identical roots: Unison records them and keeps the version
            #expect(first.status == 0, "\(first.standardError)")
        }
        try roots.edit(roots.one, ["-u", "user-from-one"])
        waitForNextClockSecond()  // the next edit is stamped a second later (KDBX times: whole seconds)
        try roots.edit(roots.two, ["--url", "https://two.example"])
        let synced = try roots.sync()
        #expect(synced.status == 0, "\(String(decoding: synced.standardOutput, as: UTF8.self)) \(synced.standardError)")
        for folder in [roots.one, roots.two] {
            let shown = try roots.show(folder)
            #expect(shown.contains("UserName: user-from-one") && shown.contains("URL: https://two.example"), "\(folder.lastPathComponent): \(shown)")
        }
        #expect(try roots.bytes(roots.one) == roots.bytes(roots.two))
    }

    @Test("a merge that cannot be made (wrong password): Unison keeps both replicas untouched")
    func failureKeepsBoth() throws {
        let roots = try Roots()
        try roots.edit(roots.one, ["-u", "user-from-one"])
        try roots.edit(roots.two, ["--url", "https://two.example"])
        let (one, two) = (try roots.bytes(roots.one), try roots.bytes(roots.two))
        try Data("wrong\n".utf8).write(to: URL(fileURLWithPath: roots.passwordFile))
        let synced = try roots.sync()
        #expect(synced.status != 0)
        #expect(try roots.bytes(roots.one) == one && roots.bytes(roots.two) == two)
    }

    @Test("without a merge program, copyonconflict with prefer newer leaves the older version as `vault (conflict_on_DATE).kdbx`: the watcher recognises and merges it, and the next unison run carries the merge to the other root")
    func copyOnConflictFoldedByWatcher() throws {
        let roots = try Roots()
        func unison() throws -> ProcessRunner.Outcome {
            try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/unison"), [roots.one.path, roots.two.path, "-batch", "-auto",
                                  "-copyonconflict", "-prefer", "newer"], environment: roots.environment)
        }
        #expect(try unison().status == 0)
        try roots.edit(roots.one, ["-u", "user-from-one"])
        waitForNextClockSecond()  // the next edit is stamped a second later (KDBX times: whole seconds)
        try roots.edit(roots.two, ["--url", "https://two.example"])
        _ = try unison()
        let copies = try FileManager.default.contentsOfDirectory(atPath: roots.one.path).filter { $0.hasPrefix("vault (conflict") }
        #expect(copies.count == 1, "\(copies)")
        let listed = try ToolRunner.run(["conflicts", roots.one.appendingPathComponent("vault.kdbx").path, "--json"])
        #expect(listed.standardOutput.contains("unison"), "\(listed.standardOutput)")
        let watched = try ToolRunner.run(["watch", roots.one.appendingPathComponent("vault.kdbx").path, "--once", "--password-command",
                                          "cat '\(roots.passwordFile)'", "--state-dir", roots.root.appendingPathComponent("watch-state").path])
        #expect(watched.status == 0, "\(watched.standardError)")
        #expect(try unison().status == 0)
        for folder in [roots.one, roots.two] {
            let shown = try roots.show(folder)
            #expect(shown.contains("UserName: user-from-one") && shown.contains("URL: https://two.example"), "\(folder.lastPathComponent): \(shown)")
        }
    }
}

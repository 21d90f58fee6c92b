import Foundation
import MyPassCrypto
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// What is not the user's own is not trusted: a state directory another user owns or may write in,
/// a journal record whose files were swapped, a file that carries another vault's identity into the
/// keyring, a base that is another database.
@Suite("Trust boundaries: state, journal, keyring items, bases", .serialized)
struct TrustBoundaryTests {
    @Test("a state directory others may write in (0777), or another user's, is refused with exit 7 before anything is read or written")
    func foreignStateDirectory() throws {
        let vault = try ScratchVault()
        defer { vault.remove() }
        let shared = vault.directory.appendingPathComponent("shared-state").path
        try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: false)
        chmod(shared, 0o777)
        let before = try Data(contentsOf: URL(fileURLWithPath: vault.vault))
        for arguments in [["watch", "--once", vault.vault], ["add", vault.vault, "/Planted"], ["journal", vault.vault]] {
            let outcome = try ToolRunner.run(arguments + ["--password-stdin", "--state-dir", shared], input: ScratchVault.password + "\n")
            #expect(outcome.status == 7, "\(arguments[0]): \(outcome.standardError)")
            #expect(outcome.standardError.contains("others may write in it"), "\(arguments[0]): \(outcome.standardError)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: shared).isEmpty)
        #expect(try Data(contentsOf: URL(fileURLWithPath: vault.vault)) == before)
        chmod(shared, 0o700)
        if geteuid() == 0 {
            // As root (CI), the same folder handed to another user.
            #expect(chown(shared, 65534, 65534) == 0)
            let outcome = try ToolRunner.run(["watch", "--once", vault.vault, "--password-stdin", "--state-dir", shared], input: ScratchVault.password + "\n")
            #expect(outcome.status == 7 && outcome.standardError.contains("belongs to another user"), "\(outcome.standardError)")
        }
    }

    @Test("undo of a record whose after-file was swapped for another version (its SHA-256 fixed up in the record) is refused; the vault is untouched")
    func forgedJournalRecord() throws {
        let vault = try ScratchVault()
        defer { vault.remove() }
        let other = vault.otherCopy
        try vault.diverge(here: [(["edit", vault.vault, "/No URL", "-u", "alice-local"], [])], there: [(["add", other, "/Added by B"], [])])
        #expect(try vault.run(["merge", vault.vault, other]).status == 0)
        // A later edit: an entry the merge never touched.
        #expect(try vault.run(["add", vault.vault, "/Added after the merge"]).status == 0)
        let current = try Data(contentsOf: URL(fileURLWithPath: vault.vault))
        let journal = try #require(try FileManager.default.contentsOfDirectory(atPath: vault.stateDirectory).first { $0.hasSuffix(".journal") })
        let folder = vault.stateDirectory + "/" + journal
        let summary = try #require(try FileManager.default.contentsOfDirectory(atPath: folder).first { $0.hasSuffix(".json") })
        let id = String(summary.dropLast(".json".count))
        // Whoever can write the state puts the current vault as the merge's "after" and fixes the record's hash.
        let afterPath = folder + "/" + id + ".after.kdbx"
        let oldAfter = SHA256.hexHash(try Data(contentsOf: URL(fileURLWithPath: afterPath)))
        try current.write(to: URL(fileURLWithPath: afterPath))
        let recordPath = folder + "/" + summary
        let record = try String(contentsOfFile: recordPath, encoding: .utf8).replacingOccurrences(of: oldAfter, with: SHA256.hexHash(current))
        try Data(record.utf8).write(to: URL(fileURLWithPath: recordPath))
        let undone = try vault.run(["undo", vault.vault, id])
        #expect(undone.status == 6, "\(undone.standardError)")
        #expect(undone.standardError.contains("not the versions this device journaled"), "\(undone.standardError)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: vault.vault)) == current)
    }

    @Test("merge --base naming another database is refused with exit 6, nothing written")
    func baseOfAnotherDatabase() throws {
        let vault = try ScratchVault()
        defer { vault.remove() }
        let other = vault.otherCopy
        try vault.diverge(here: [(["edit", vault.vault, "/No URL", "-u", "alice-local"], [])], there: [(["add", other, "/Added by B"], [])])
        let stranger = vault.directory.appendingPathComponent("stranger.kdbx").path
        #expect(try ToolRunner.run(["db-create", stranger, "--password-stdin", "-t", "100"], input: ScratchVault.password + "\n").status == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: vault.vault))
        let merged = try vault.run(["merge", vault.vault, other, "--base=" + stranger])
        #expect(merged.status == 6, "\(merged.standardError)")
        #expect(merged.standardError.contains("another database"), "\(merged.standardError)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: vault.vault)) == before)
    }

    @Test("keyring store of a file carrying another vault's identity with another password is refused (exit 2); the vault's item still opens it; --replace replaces")
    func keyringItemOfAnotherFile() throws {
        let session = try SecretServiceSession()
        defer { session.stop() }
        let vault = try ScratchVault()
        defer { vault.remove() }
        #expect(try session.tool(["keyring", "store", vault.vault, "--password-stdin"], input: ScratchVault.password + "\n").status == 0)
        // The same database (root group and its time) under another password, as anyone can make it.
        let twin = vault.directory.appendingPathComponent("twin.kdbx").path
        let script = "import sys\nfrom pykeepass import PyKeePass\nk = PyKeePass(sys.argv[1], password=sys.argv[2])\n"
            + "k.password = 'twin-pässword'\nk.save(filename=sys.argv[3])\n"
        let made = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", script, vault.vault, ScratchVault.password, twin])
        #expect(made.status == 0, "\(made.standardError)")
        let refused = try session.tool(["keyring", "store", twin, "--password-stdin"], input: "twin-pässword\n")
        #expect(refused.status == 2, "\(refused.standardError)")
        #expect(refused.standardError.contains("--replace"), "\(refused.standardError)")
        #expect(try session.tool(["ls", vault.vault, "--password-from", "keyring"]).status == 0, "the vault's item was replaced")
        let replaced = try session.tool(["keyring", "store", twin, "--password-stdin", "--replace"], input: "twin-pässword\n")
        #expect(replaced.status == 0, "\(replaced.standardError)")
        #expect(try session.tool(["ls", twin, "--password-from", "keyring"]).status == 0)
    }
}

import Foundation
import Testing
import TestSupport

/// A repository whose other branch or clone is hostile, with the real git: a file name git hands to
/// the merge driver is data, never an option (`--help` included); git expands nothing inside the options `git install`
/// wrote; `git install` never writes through a `.gitattributes` that links elsewhere.
@Suite("git: a hostile branch or clone (real git)", .serialized)
struct GitHostileBranchTests {
    typealias Repositories = GitDriverTests.Repositories

    /// The other clone renames the vault to a name that reads as an option (the file's bytes are kept
    /// but for one byte, so git follows the rename) while this clone edits it: git hands that name to
    /// the driver as `%P`.
    @Test("a vault renamed to an option-like name on the other branch runs no command (driver installed with and without credential options)",
          arguments: ["--challenge-response-command=touch PWNED;false x.kdbx", "--password-command=touch PWNED;false x.kdbx"])
    func optionLikeNameRunsNothing(hostileName: String) throws {
        let repos = try Repositories()
        let (a, b) = try GitDriverTests.pair(repos)
        let vaultB = b.appendingPathComponent("vault.kdbx").path
        try repos.git(["mv", "--", "vault.kdbx", hostileName], in: a)
        let handle = try FileHandle(forWritingTo: a.appendingPathComponent(hostileName))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data([0]))
        try handle.close()
        try repos.git(["commit", "-q", "-am", "rename"], in: a)
        try repos.git(["push", "-q", "origin", "main"], in: a)
        #expect(try repos.tool(["edit", vaultB, "/No URL", "-u", "user-from-b"], in: b).status == 0)
        try repos.git(["commit", "-q", "-am", "b"], in: b)
        let pulled = try repos.git(["pull", "--no-rebase", "--no-edit", "origin", "main"], in: b)
        #expect(pulled.standardError.contains("mypass-sync"), "git did not run the driver: \(pulled.standardError)")
        let planted = [a, b, repos.root].map { $0.appendingPathComponent("PWNED").path }
        #expect(planted.allSatisfy { !FileManager.default.fileExists(atPath: $0) }, "the file name ran a command: \(pulled.standardError)")
    }

    @Test("a `%` in an installed credential option reaches the command as it was written (git expands nothing of it)")
    func percentIsNotExpanded() throws {
        let repos = try Repositories()
        let a = try repos.clone("a")
        try FileManager.default.copyItem(atPath: CLIFixtures.kdbx4, toPath: a.appendingPathComponent("vault.kdbx").path)
        try Data(".state-outside/\n".utf8).write(to: a.appendingPathComponent(".gitignore"))
        // The command prints the password only if it sees `%P` literally.
        let command = "case '%P' in '%P') cat '\(repos.passwordFile)';; esac"
        let installed = try ToolRunner.run(["git", "install", "--repo", a.path, "--password-command", command], environment: repos.environment)
        #expect(installed.status == 0, "\(installed.standardError)")
        let driver = try repos.git(["config", "merge.mypass-sync.driver"], in: a).output
        #expect(driver.contains("%%P") && driver.contains("-- %O %A %B %P"), "\(driver)")
        try repos.git(["add", "-A"], in: a)
        try repos.git(["commit", "-q", "-m", "vault"], in: a)
        try repos.git(["push", "-q", "origin", "main"], in: a)
        let b = try repos.clone("b")
        #expect(try ToolRunner.run(["git", "install", "--repo", b.path, "--password-command", command], environment: repos.environment).status == 0)
        #expect(try repos.tool(["edit", a.appendingPathComponent("vault.kdbx").path, "/No URL", "-u", "user-from-a"], in: a).status == 0)
        try repos.git(["commit", "-q", "-am", "a"], in: a)
        try repos.git(["push", "-q", "origin", "main"], in: a)
        waitForNextClockSecond()  // the next edit is stamped a second later (KDBX times: whole seconds)
        #expect(try repos.tool(["edit", b.appendingPathComponent("vault.kdbx").path, "/No URL", "--url", "https://b.example"], in: b).status == 0)
        try repos.git(["commit", "-q", "-am", "b"], in: b)
        let pulled = try repos.git(["pull", "-q", "--no-rebase", "--no-edit", "origin", "main"], in: b)
        #expect(pulled.status == 0, "the driver did not get the password through its command: \(pulled.standardError)")
    }

    @Test("a driver line written without `--` (an older install) is refused before anything is parsed: git marks a conflict")
    func olderDriverLineIsRefused() throws {
        let outcome = try ToolRunner.run(["git", "merge-driver", "/nonexistent/O", "/nonexistent/A", "/nonexistent/B",
                                          "--password-command=touch /tmp/never-run-\(getpid())"])
        #expect(outcome.status == 1)
        #expect(outcome.standardError.contains("git install"), "\(outcome.standardError)")
        #expect(!FileManager.default.fileExists(atPath: "/tmp/never-run-\(getpid())"))
    }

    @Test("after `--` a word that reads as help is a file name: the driver with it missing fails (git marks a conflict), never prints help with exit 0",
          arguments: [["O", "A", "B", "--help"], ["O", "--help", "B", "P"], ["-h", "A", "B", "P"]])
    func helpAfterSeparatorIsAFileName(names: [String]) throws {
        let folder = try CLIFixtures.scratch()
        defer { try? FileManager.default.removeItem(at: folder) }
        let paths = names.map { $0.hasPrefix("-") ? $0 : folder.appendingPathComponent($0).path }
        let outcome = try ToolRunner.run(["git", "merge-driver", "--password-command", "false", "--"] + paths)
        #expect(outcome.status == 1, "git takes exit 0 as merged: \(outcome.standardOutput.prefix(200))")
        #expect(!outcome.standardOutput.contains("USAGE"), "help printed: \(outcome.standardOutput.prefix(200))")
    }

    @Test("install refuses a .gitattributes that is a symlink (to a private key) or not a regular file, and writes nothing through it",
          arguments: [true, false])
    func attributesLinkIsRefused(isLink: Bool) throws {
        let repos = try Repositories()
        let a = try repos.clone("a")
        let privateKey = repos.root.appendingPathComponent("id_ed25519")
        let secretText = "-----BEGIN OPENSSH PRIVATE KEY-----\nnot-a-real-key\n"
        try Data(secretText.utf8).write(to: privateKey)
        chmod(privateKey.path, 0o600)
        let attributes = a.appendingPathComponent(".gitattributes")
        if isLink {
            try FileManager.default.createSymbolicLink(atPath: attributes.path, withDestinationPath: privateKey.path)
        } else {
            try FileManager.default.createDirectory(at: attributes, withIntermediateDirectories: false)
        }
        let installed = try ToolRunner.run(["git", "install", "--repo", a.path, "--password-from", "keyring"], environment: repos.environment)
        #expect(installed.status != 0)
        #expect(installed.standardError.contains(".gitattributes"), "\(installed.standardError)")
        #expect(installed.standardError.contains(isLink ? "symbolic link" : "not a regular file"), "\(installed.standardError)")
        if isLink {
            #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: attributes.path)) == privateKey.path, "the link was replaced")
        }
        #expect(try String(contentsOf: privateKey, encoding: .utf8) == secretText)
        #expect(!installed.standardError.contains("not-a-real-key") && !installed.standardOutput.contains("not-a-real-key"))
        #expect(try repos.git(["config", "--local", "--get", "merge.mypass-sync.driver"], in: a).status != 0, "settings were written")
    }
}

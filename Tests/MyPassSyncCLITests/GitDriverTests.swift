import Foundation
import Testing
import TestSupport

/// A vault in a git repository, with the real git: two clones of a bare repository edit it at once,
/// `git pull` merges with `mypass-sync git merge-driver` (the ancestor included), `git diff` and
/// `git show` print the textconv text with no secret.
@Suite("git: the merge driver with the ancestor, textconv, install (real git)", .serialized)
struct GitDriverTests {
    /// A scratch home with a bare repository and a clone per device.
    final class Repositories {
        let root: URL
        let environment: [String: String]
        let passwordFile: String

        init() throws {
            root = try CLIFixtures.scratch()
            environment = ["HOME": root.path, "XDG_CONFIG_HOME": root.appendingPathComponent("config").path,
                           "GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.org",
                           "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.org", "GIT_TERMINAL_PROMPT": "0"]
            passwordFile = root.appendingPathComponent("pw.txt").path
            try Data((ScratchVault.password + "\n").utf8).write(to: URL(fileURLWithPath: passwordFile))
            _ = try git(["init", "-q", "--bare", "-b", "main", root.appendingPathComponent("origin.git").path])
        }

        deinit { try? FileManager.default.removeItem(at: root) }

        func clone(_ name: String) throws -> URL {
            let folder = root.appendingPathComponent(name)
            _ = try git(["clone", "-q", root.appendingPathComponent("origin.git").path, folder.path])
            return folder
        }

        @discardableResult
        func git(_ arguments: [String], in folder: URL? = nil) throws -> ProcessRunner.Outcome {
            try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/git"), (folder.map { ["-C", $0.path] } ?? []) + arguments, environment: environment)
        }

        /// `mypass-sync ARGUMENTS` with the password from the password file.
        func tool(_ arguments: [String], in folder: URL) throws -> ToolRunner.Outcome {
            try ToolRunner.run(arguments + ["--password-command", "cat '\(passwordFile)'",
                                            "--state-dir", folder.appendingPathComponent(".state-outside").path],
                               environment: environment)
        }
    }

    /// Two clones with the vault committed and the driver installed in each.
    static func pair(_ repos: Repositories) throws -> (URL, URL) {
        let a = try repos.clone("a")
        try FileManager.default.copyItem(atPath: CLIFixtures.kdbx4, toPath: a.appendingPathComponent("vault.kdbx").path)
        try Data(".state-outside/\n".utf8).write(to: a.appendingPathComponent(".gitignore"))
        let installed = try ToolRunner.run(["git", "install", "--repo", a.path, "--password-command", "cat '\(repos.passwordFile)'"],
                                           environment: repos.environment)
        #expect(installed.status == 0, "\(installed.standardError)")
        #expect(installed.standardOutput.contains("merge.mypass-sync.driver") && !installed.standardOutput.contains(ScratchVault.password))
        try repos.git(["add", "-A"], in: a)
        try repos.git(["commit", "-q", "-m", "vault"], in: a)
        try repos.git(["push", "-q", "origin", "main"], in: a)
        let b = try repos.clone("b")
        #expect(try ToolRunner.run(["git", "install", "--repo", b.path, "--password-command", "cat '\(repos.passwordFile)'"],
                                   environment: repos.environment).status == 0)
        return (a, b)
    }

    @Test("concurrent edits in two clones: git pull merges them field by field with the ancestor (both current, the loser in history), git diff and show print no secret")
    func pullMerges() throws {
        let repos = try Repositories()
        let (a, b) = try Self.pair(repos)
        let vaultA = a.appendingPathComponent("vault.kdbx").path, vaultB = b.appendingPathComponent("vault.kdbx").path
        #expect(try repos.tool(["edit", vaultA, "/No URL", "-u", "user-from-a", "--notes", "notes from a"], in: a).status == 0)
        try repos.git(["commit", "-q", "-am", "a: user name"], in: a)
        try repos.git(["push", "-q", "origin", "main"], in: a)
        waitForNextClockSecond()  // the next edit is stamped a second later (KDBX times: whole seconds)
        #expect(try repos.tool(["edit", vaultB, "/No URL", "--url", "https://from-b.example", "--notes", "notes from b"], in: b).status == 0)
        try repos.git(["commit", "-q", "-am", "b: url"], in: b)
        let pulled = try repos.git(["pull", "-q", "--no-rebase", "--no-edit", "origin", "main"], in: b)
        #expect(pulled.status == 0, "\(pulled.standardError)")
        #expect(String(decoding: try repos.git(["status", "--porcelain"], in: b).standardOutput, as: UTF8.self).isEmpty)
        let shown = try repos.tool(["show", vaultB, "/No URL"], in: b)
        #expect(shown.standardOutput.contains("UserName: user-from-a") && shown.standardOutput.contains("URL: https://from-b.example"),
                "\(shown.standardOutput)")
        #expect(shown.standardOutput.contains("Notes: notes from b"), "the newer edit of the field both changed is current: \(shown.standardOutput)")
        let view = try ReferenceTools.view(.pykeepass, path: URL(fileURLWithPath: vaultB), password: ScratchVault.password, keyFile: nil)
        #expect((view.entries.first { $0.title == "No URL" }?.historyCount ?? 0) >= 2)
        // git show and git log -p run the textconv: the change is readable, no secret printed.
        let log = try repos.git(["log", "-p", "-2", "--", "vault.kdbx"], in: b)
        let text = String(decoding: log.standardOutput, as: UTF8.self)
        #expect(text.contains("+  UserName: user-from-a") || text.contains("+  URL: https://from-b.example"), "\(text.prefix(2000))")
        #expect(!text.contains("Binary files"), "textconv was not used")
        #expect(SecretScan.firstSecret(in: text) == nil, "git log -p printed a secret")
    }

    @Test("a merge the driver cannot make (wrong credentials) leaves git's conflict state and the current version untouched")
    func failureIsAConflict() throws {
        let repos = try Repositories()
        let (a, b) = try Self.pair(repos)
        let vaultA = a.appendingPathComponent("vault.kdbx").path, vaultB = b.appendingPathComponent("vault.kdbx").path
        #expect(try repos.tool(["edit", vaultA, "/No URL", "-u", "user-from-a"], in: a).status == 0)
        try repos.git(["commit", "-q", "-am", "a"], in: a)
        try repos.git(["push", "-q", "origin", "main"], in: a)
        #expect(try repos.tool(["edit", vaultB, "/No URL", "-u", "user-from-b"], in: b).status == 0)
        try repos.git(["commit", "-q", "-am", "b"], in: b)
        let ours = try Data(contentsOf: URL(fileURLWithPath: vaultB))
        // The driver's password command now fails.
        try Data("wrong-password\n".utf8).write(to: URL(fileURLWithPath: repos.passwordFile))
        let pulled = try repos.git(["pull", "-q", "--no-rebase", "--no-edit", "origin", "main"], in: b)
        #expect(pulled.status != 0)
        #expect(String(decoding: try repos.git(["status", "--porcelain"], in: b).standardOutput, as: UTF8.self).contains("UU vault.kdbx"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: vaultB)) == ours, "the current version was changed by a failed merge")
    }

    @Test("git log -p goes on past blobs textconv cannot open (truncated, not a vault, another vault's key): one line says why, the readable versions are shown")
    func unreadableBlobsDoNotStopTheLog() throws {
        let repos = try Repositories()
        let a = try repos.clone("a")
        let vault = a.appendingPathComponent("vault.kdbx")
        try Data(".state-outside/\n".utf8).write(to: a.appendingPathComponent(".gitignore"))
        #expect(try ToolRunner.run(["git", "install", "--repo", a.path, "--password-command", "cat '\(repos.passwordFile)'"],
                                   environment: repos.environment).status == 0)
        let good = try Data(contentsOf: URL(fileURLWithPath: CLIFixtures.kdbx4))
        let versions: [(String, Data)] = [("readable", good), ("truncated", good.prefix(300)), ("not a vault", Data("hello\n".utf8)),
                                          ("another key", try Data(contentsOf: URL(fileURLWithPath: CLIFixtures.kdbx31))), ("readable again", good)]
        for (message, bytes) in versions {
            try bytes.write(to: vault)
            try repos.git(["add", "-A"], in: a)
            try repos.git(["commit", "-q", "-m", message], in: a)
        }
        let log = try repos.git(["log", "-p", "--", "vault.kdbx"], in: a)
        let text = String(decoding: log.standardOutput, as: UTF8.self)
        #expect(log.status == 0, "\(log.standardError)")
        let notices = text.split(separator: "\n").filter { $0.contains("mypass-sync: this version cannot be shown") }
        #expect(notices.count >= 3, "\(text.prefix(3000))")
        #expect(notices.contains { $0.contains("truncated") } && notices.contains { $0.contains("not a KDBX file") }
                && notices.contains { $0.contains("wrong password") }, "\(notices)")
        #expect(text.contains("readable again") && text.contains("database "), "the readable versions are shown: \(text.prefix(3000))")
        #expect(SecretScan.firstSecret(in: text) == nil, "git log -p printed a secret")
    }
}

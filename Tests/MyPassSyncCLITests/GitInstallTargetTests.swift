import Foundation
import Testing
import TestSupport

/// `git install` writes the settings file git itself uses, with the real git: a linked worktree's
/// settings are the shared repository's, the user's are `GIT_CONFIG_GLOBAL` when it is set, and the
/// file examined is the file written, so a symlink there is refused (exit 6) and nothing is written
/// through it.
@Suite("git install: the settings file git uses, never through a link (real git)", .serialized)
struct GitInstallTargetTests {
    typealias Repositories = GitDriverTests.Repositories

    /// A private file (a stand-in for a key) holding `text`, 0600.
    static func privateFile(in repos: Repositories, text: String) throws -> URL {
        let file = repos.root.appendingPathComponent("private-\(UUID().uuidString)")
        try Data(text.utf8).write(to: file)
        chmod(file.path, 0o600)
        return file
    }

    static func expectRefusal(_ installed: ToolRunner.Outcome, naming path: String, privateFile: URL, holding text: String) throws {
        #expect(installed.status == 6, "\(installed.standardError)")
        #expect(installed.standardError.contains(path) && installed.standardError.contains("symbolic link"), "\(installed.standardError)")
        #expect(try String(contentsOf: privateFile, encoding: .utf8) == text, "written through the link")
    }

    @Test("in a linked worktree install writes the shared settings, which every worktree reads")
    func worktreeWritesSharedSettings() throws {
        let repos = try Repositories()
        let a = try repos.clone("a")
        try repos.git(["commit", "-q", "--allow-empty", "-m", "start"], in: a)
        let linked = repos.root.appendingPathComponent("linked")
        try repos.git(["worktree", "add", "-q", "-b", "side", linked.path], in: a)
        let installed = try ToolRunner.run(["git", "install", "--repo", linked.path, "--password-from", "keyring"], environment: repos.environment)
        #expect(installed.status == 0, "\(installed.standardError)")
        #expect(installed.standardOutput.contains(a.appendingPathComponent(".git/config").path), "\(installed.standardOutput)")
        for folder in [a, linked] {
            #expect(try repos.git(["config", "merge.mypass-sync.driver"], in: folder).status == 0)
        }
        #expect(FileManager.default.fileExists(atPath: linked.appendingPathComponent(".gitattributes").path))
    }

    @Test("in a linked worktree whose shared settings file is a symlink, install refuses and writes nothing through it")
    func worktreeSharedSettingsLinkIsRefused() throws {
        let repos = try Repositories()
        let a = try repos.clone("a")
        try repos.git(["commit", "-q", "--allow-empty", "-m", "start"], in: a)
        let linked = repos.root.appendingPathComponent("linked")
        try repos.git(["worktree", "add", "-q", "-b", "side", linked.path], in: a)
        // The link's target is a valid settings file, so git itself keeps working through it.
        let shared = a.appendingPathComponent(".git/config")
        let text = try String(contentsOf: shared, encoding: .utf8)
        let target = try Self.privateFile(in: repos, text: text)
        try FileManager.default.removeItem(at: shared)
        try FileManager.default.createSymbolicLink(atPath: shared.path, withDestinationPath: target.path)
        let installed = try ToolRunner.run(["git", "install", "--repo", linked.path, "--password-from", "keyring"], environment: repos.environment)
        try Self.expectRefusal(installed, naming: shared.path, privateFile: target, holding: text)
    }

    @Test("install --global refuses a GIT_CONFIG_GLOBAL that is a symlink and writes nothing through it")
    func globalSettingsLinkIsRefused() throws {
        let repos = try Repositories()
        let text = "[user]\n\tname = Test\n"
        let target = try Self.privateFile(in: repos, text: text)
        let linkedSettings = repos.root.appendingPathComponent("linked-gitconfig")
        try FileManager.default.createSymbolicLink(atPath: linkedSettings.path, withDestinationPath: target.path)
        let environment = repos.environment.merging(["GIT_CONFIG_GLOBAL": linkedSettings.path]) { $1 }
        let installed = try ToolRunner.run(["git", "install", "--global", "--password-from", "keyring"], environment: environment)
        try Self.expectRefusal(installed, naming: linkedSettings.path, privateFile: target, holding: text)
    }

    @Test("install --global writes GIT_CONFIG_GLOBAL when it is set, the file git reads")
    func globalSettingsFollowGitConfigGlobal() throws {
        let repos = try Repositories()
        let settings = repos.root.appendingPathComponent("elsewhere.gitconfig")
        let environment = repos.environment.merging(["GIT_CONFIG_GLOBAL": settings.path]) { $1 }
        let installed = try ToolRunner.run(["git", "install", "--global", "--password-from", "keyring"], environment: environment)
        #expect(installed.status == 0, "\(installed.standardError)")
        let read = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/git"), ["config", "--global", "merge.mypass-sync.driver"],
                                         environment: environment)
        #expect(read.status == 0 && String(decoding: read.standardOutput, as: UTF8.self).contains("merge-driver"))
        #expect(!FileManager.default.fileExists(atPath: repos.root.appendingPathComponent(".gitconfig").path))
    }
}

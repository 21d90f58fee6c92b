import Foundation
import MyPassCrypto
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The shipped rclone bisync wrapper treats its state as the program does: no link followed, no
/// folder of another's used, and a failure of mypass-sync is its exit status.
@Suite("rclone wrapper: its state files and its exit status", .serialized)
struct RcloneWrapperHardeningTests {
    /// A folder with the vault, a folder standing in for the remote, a state directory (0700).
    final class Setup {
        let root: URL
        let vault: String
        let state: String
        let remote: String
        let passwordFile: String

        init() throws {
            root = try CLIFixtures.scratch()
            let folder = root.appendingPathComponent("folder")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            vault = folder.appendingPathComponent("vault.kdbx").path
            try FileManager.default.copyItem(atPath: CLIFixtures.kdbx4, toPath: vault)
            remote = root.appendingPathComponent("remote").path
            try FileManager.default.createDirectory(atPath: remote, withIntermediateDirectories: true)
            state = root.appendingPathComponent("state").path
            try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            passwordFile = root.appendingPathComponent("pw.txt").path
            try Data((CLIFixtures.kdbx4Password + "\n").utf8).write(to: URL(fileURLWithPath: passwordFile))
        }

        deinit { try? FileManager.default.removeItem(at: root) }

        /// The wrapper's name for this vault's state files.
        var key: String { String(SHA256.hexHash(Data(URL(fileURLWithPath: vault).resolvingSymlinksInPath().path.utf8)).prefix(16)) }

        func wrapper(mypassSync: String? = nil) throws -> ProcessRunner.Outcome {
            try ProcessRunner.run(URL(fileURLWithPath: "/bin/bash"),
                                  [RcloneBisyncTests.wrapper, vault, remote, "--password-command", "cat '\(passwordFile)'", "--state-dir", state],
                                  environment: ["MYPASS_SYNC": try mypassSync ?? ToolRunner.binary().path, "PATH": "/usr/bin:/bin",
                                                "HOME": root.path, "RCLONE_CONFIG": root.appendingPathComponent("rclone.conf").path])
        }
    }

    @Test("a lock or a list of retired copies that is a symlink is refused (exit 7): no file created or truncated at its target")
    func linkedStateFiles() throws {
        for file in ["lock", "retired"] {
            let setup = try Setup()
            let target = setup.root.appendingPathComponent("victim-\(file)").path
            if file == "retired" { try Data("precious\n".utf8).write(to: URL(fileURLWithPath: target)) }
            #expect(symlink(target, setup.state + "/bisync-\(setup.key).\(file)") == 0)
            let outcome = try setup.wrapper()
            #expect(outcome.status == 7, "\(file): \(outcome.standardError)")
            #expect(outcome.standardError.contains("link"), "\(file): \(outcome.standardError)")
            if file == "lock" {
                #expect(!FileManager.default.fileExists(atPath: target), "a lock was created at the link's target")
            } else {
                #expect(try String(contentsOfFile: target, encoding: .utf8) == "precious\n")
            }
        }
    }

    @Test("a state directory others may write in is refused (exit 7)")
    func openStateDirectory() throws {
        let setup = try Setup()
        chmod(setup.state, 0o777)
        let outcome = try setup.wrapper()
        #expect(outcome.status == 7, "\(outcome.standardError)")
        #expect(outcome.standardError.contains("not a private folder"), "\(outcome.standardError)")
    }

    @Test("when mypass-sync conflicts fails, the wrapper exits with its status, not rclone's")
    func conflictsFailureIsTheExitStatus() throws {
        let setup = try Setup()
        let failing = setup.root.appendingPathComponent("mypass-sync-failing-conflicts").path
        try Data("#!/bin/sh\n[ \"$1\" = conflicts ] && { echo 'cannot list' >&2; exit 5; }\nexec '\(try ToolRunner.binary().path)' \"$@\"\n".utf8)
            .write(to: URL(fileURLWithPath: failing))
        chmod(failing, 0o755)
        let outcome = try setup.wrapper(mypassSync: failing)
        #expect(outcome.status == 5, "\(outcome.standardError)")
        #expect(outcome.standardError.contains("mypass-sync conflicts failed (5)"), "\(outcome.standardError)")
    }
}

import Foundation
import Testing
import TestSupport

/// Credentials without a prompt, end to end: a password command, and a real Secret Service
/// (gnome-keyring on a private D-Bus session) found again by database identity.
@Suite("Credentials without a prompt: --password-command and the desktop keyring", .serialized)
struct CredentialSourceTests {
    /// A file holding the scratch vault's password, for commands that print it.
    static func passwordFile(_ vault: ScratchVault) throws -> String {
        let path = vault.directory.appendingPathComponent("pw.txt").path
        try Data((ScratchVault.password + "\n").utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test("--password-command: its first line opens the vault; a failing, silent or missing command is exit 3 naming the command, never its output")
    func passwordCommand() throws {
        let vault = try ScratchVault()
        defer { vault.remove() }
        let file = try Self.passwordFile(vault)
        let listed = try ToolRunner.run(["ls", vault.vault, "--password-command", "sleep 1; cat '\(file)'"])
        #expect(listed.status == 0, "\(listed.standardError)")
        #expect(listed.standardOutput.contains("No URL"))
        let added = try ToolRunner.run(["add", vault.vault, "/Via command", "--password-command", "cat '\(file)'", "--state-dir", vault.stateDirectory])
        #expect(added.status == 0, "\(added.standardError)")
        // What the commands print is in a file, so that it is not part of the command line the message names.
        let printed = vault.directory.appendingPathComponent("printed.txt").path
        try Data("printed-by-the-command-xyz\n".utf8).write(to: URL(fileURLWithPath: printed))
        for (command, words) in [("cat '\(printed)'; exit 1", "failed (exit status 1)"), ("true", "printed nothing"),
                                 ("/nonexistent/helper", "failed (exit status 127)"), ("cat '\(printed)'", "wrong")] {
            let outcome = try ToolRunner.run(["ls", vault.vault, "--password-command", command])
            #expect(outcome.status == 3, "\(command): \(outcome.standardError)")
            #expect(outcome.standardError.contains(words), "\(command): \(outcome.standardError)")
            #expect(!outcome.standardError.contains("printed-by-the-command-xyz"), "\(command): its output was echoed")
        }
        let both = try ToolRunner.run(["ls", vault.vault, "--password-command", "true", "--password-stdin"], input: "x\n")
        #expect(both.status == 2 && both.standardError.contains("exclude each other"), "\(both.standardError)")
    }

    @Test("the password never reaches argv or the environment of any process while a --password-command run is under way")
    func passwordNotInProcessTable() throws {
        let vault = try ScratchVault()
        defer { vault.remove() }
        let file = try Self.passwordFile(vault)
        let running = try ScratchVault.Running(["ls", vault.vault, "--password-command", "cat '\(file)'; sleep 2"], environment: [:])
        var seen: [String] = []
        var scans = 0
        // Every 100 ms while the command runs (it sleeps 2 s after printing the password).
        _ = pollUntil(timeout: 20, interval: 0.1) {
            for pid in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] where Int(pid) != nil {
                for part in ["cmdline", "environ"] {
                    guard let bytes = FileManager.default.contents(atPath: "/proc/\(pid)/\(part)") else { continue }
                    if bytes.range(of: Data(ScratchVault.password.utf8)) != nil { seen.append("\(pid)/\(part)") }
                }
            }
            scans += 1
            return !running.process.isRunning
        }
        let finished = running.finish()
        #expect(finished.status == 0, "\(finished.errors)")
        #expect(scans >= 5)
        #expect(seen.isEmpty, "the password was in \(Set(seen))")
    }

    @Test("keyring store, then ls, show, merge and watch --once with --password-from keyring and no prompt; a conflict copy found by identity; another database with the same name and password is not; forget; list shows no secret")
    func keyringRoundTrip() throws {
        let session = try SecretServiceSession()
        defer { session.stop() }
        let vault = try ScratchVault()
        defer { vault.remove() }
        func tool(_ arguments: [String], input: String = "") throws -> ToolRunner.Outcome {
            try ToolRunner.run(arguments, input: input, environment: session.environment)
        }
        let stored = try tool(["keyring", "store", vault.vault, "--password-stdin"], input: ScratchVault.password + "\n")
        #expect(stored.status == 0, "\(stored.standardError)")
        let search = try session.secretTool(["search", "--all", "application", "mypass-sync"])
        let found = String(decoding: search.standardOutput, as: UTF8.self) + search.standardError
        #expect(found.contains("label = mypass-sync: vault.kdbx (database"), "\(found)")
        #expect(found.contains("attribute.path = \(URL(fileURLWithPath: vault.vault).resolvingSymlinksInPath().path)"), "\(found)")
        #expect(found.contains("attribute.database-root = "), "\(found)")

        let listed = try tool(["ls", vault.vault, "--password-from", "keyring"])
        #expect(listed.status == 0 && listed.standardOutput.contains("No URL"), "\(listed.standardError)")
        let shown = try tool(["show", vault.vault, "/No URL", "--password-from", "keyring", "--verbose"])
        #expect(shown.status == 0, "\(shown.standardError)")
        #expect(shown.standardError.contains("stored for this path"), "\(shown.standardError)")

        // A conflict copy with an edit of its own: found by identity, merged without a prompt.
        let copy = vault.directory.appendingPathComponent("vault.sync-conflict-20261202-101010-ABCDEFG.kdbx").path
        try FileManager.default.copyItem(atPath: vault.vault, toPath: copy)
        #expect(try tool(["add", copy, "/From the copy", "--password-from", "keyring", "--state-dir",
                          vault.directory.appendingPathComponent("copy-state").path]).status == 0)
        let copyShown = try tool(["ls", copy, "--password-from", "keyring", "--verbose"])
        #expect(copyShown.status == 0 && copyShown.standardError.contains("another name of the same database"), "\(copyShown.standardError)")
        let watched = try tool(["watch", vault.vault, "--once", "--password-from", "keyring", "--state-dir", vault.stateDirectory])
        #expect(watched.status == 0, "\(watched.standardError)")
        #expect(try tool(["ls", vault.vault, "--password-from", "keyring"]).standardOutput.contains("From the copy"))
        let other = vault.directory.appendingPathComponent("other.kdbx").path
        try FileManager.default.copyItem(atPath: CLIFixtures.kdbx4, toPath: other)
        let merged = try tool(["merge", vault.vault, other, "--password-from", "keyring", "--state-dir", vault.stateDirectory])
        #expect(merged.status == 0, "\(merged.standardError)")

        // Another database (its own root group), the same file name and password: not this item.
        let elsewhere = try CLIFixtures.scratch()
        defer { try? FileManager.default.removeItem(at: elsewhere) }
        let stranger = elsewhere.appendingPathComponent("vault.kdbx").path
        #expect(try ToolRunner.run(["db-create", stranger, "--password-stdin", "-t", "100"], input: ScratchVault.password + "\n").status == 0)
        let refused = try tool(["ls", stranger, "--password-from", "keyring"])
        #expect(refused.status == 3 && refused.standardError.contains("keyring store"), "\(refused.standardError)")

        let listing = try tool(["keyring", "list"])
        #expect(listing.status == 0 && listing.standardOutput.contains("mypass-sync: vault.kdbx"), "\(listing.standardOutput)")
        #expect(!listing.standardOutput.contains(ScratchVault.password))
        let forgotten = try tool(["keyring", "forget", vault.vault])
        #expect(forgotten.status == 0 && forgotten.standardOutput.contains("removed 1"), "\(forgotten.standardOutput)")
        let gone = try tool(["ls", vault.vault, "--password-from", "keyring"])
        #expect(gone.status == 3 && gone.standardError.contains("keyring store"), "\(gone.standardError)")
    }

    @Test("storing another version of the same database replaces its item; two items that still match one file are refused (exit 2) naming both")
    func oneItemPerDatabase() throws {
        let session = try SecretServiceSession()
        defer { session.stop() }
        let vault = try ScratchVault()
        defer { vault.remove() }
        let copy = vault.directory.appendingPathComponent("renamed.kdbx").path
        try FileManager.default.copyItem(atPath: vault.vault, toPath: copy)
        for path in [vault.vault, copy] {
            #expect(try ToolRunner.run(["keyring", "store", path, "--password-stdin"], input: ScratchVault.password + "\n",
                                       environment: session.environment).status == 0)
        }
        let listing = try ToolRunner.run(["keyring", "list", "--json"], environment: session.environment)
        let items = (try JSONSerialization.jsonObject(with: Data(listing.standardOutput.utf8)) as? [String: Any])?["items"] as? [[String: Any]]
        #expect(items?.count == 1 && items?.first?["path"] as? String == URL(fileURLWithPath: copy).resolvingSymlinksInPath().path,
                "\(listing.standardOutput)")
        // A second item with the same identity (another program, or an older version of this tool).
        let item = try #require(items?.first)
        let identity = try #require(item["identity"] as? String)
        let root = String(identity.split(separator: " ")[2].dropLast())
        let created = String(identity.split(separator: " ").last!)
        let planted = try session.secretTool(["store", "--label", "mypass-sync: twin.kdbx (database twin)", "application", "mypass-sync",
                                              "database-root", root, "database-created", created, "path", "/elsewhere/twin.kdbx",
                                              "xdg:schema", "org.mypass.Sync.VaultPassword"], input: ScratchVault.password)
        #expect(planted.status == 0, "\(planted.standardError)")
        let refused = try ToolRunner.run(["ls", vault.vault, "--password-from", "keyring"], environment: session.environment)
        #expect(refused.status == 2, "\(refused.standardError)")
        #expect(refused.standardError.contains("twin.kdbx") && refused.standardError.contains("renamed.kdbx"), "\(refused.standardError)")
    }

    @Test("a locked collection (no prompt to unlock it here) or no Secret Service at all: exit 3, nothing written")
    func keyringUnavailable() throws {
        let vault = try ScratchVault()
        defer { vault.remove() }
        let before = try vault.bytes()
        let nobus = try ToolRunner.run(["add", vault.vault, "/Never", "--password-from", "keyring", "--state-dir", vault.stateDirectory],
                                       environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/bus", "DISPLAY": ""])
        #expect(nobus.status == 3 && nobus.standardError.contains("desktop keyring"), "\(nobus.standardError)")
        let session = try SecretServiceSession()
        defer { session.stop() }
        #expect(try ToolRunner.run(["keyring", "store", vault.vault, "--password-stdin"], input: ScratchVault.password + "\n",
                                   environment: session.environment).status == 0)
        let locked = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/dbus-send"),
                                           ["--session", "--print-reply", "--dest=org.freedesktop.secrets", "/org/freedesktop/secrets",
                                            "org.freedesktop.Secret.Service.Lock", "array:objpath:/org/freedesktop/secrets/collection/login"],
                                           environment: session.environment)
        #expect(locked.status == 0, "\(locked.standardError)")
        let refused = try ToolRunner.run(["add", vault.vault, "/Never", "--password-from", "keyring", "--state-dir", vault.stateDirectory],
                                         environment: session.environment)
        #expect(refused.status == 3, "\(refused.standardError)")
        #expect(try vault.bytes() == before, "something was written")
    }
}

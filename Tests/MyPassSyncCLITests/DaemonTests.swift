import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

private let personalPassword = CLIFixtures.kdbx4Password
private let workPassword = CLIFixtures.kdbx31Password
private let familyKey = CLIFixtures.key("binary32.key")

@Suite("daemon: one process for every vault, its socket, its notices (end to end)", .serialized)
struct DaemonTests {
    @Test("a decision-needed notice's Merge button answers it: picked in dunst's context menu, the daemon merges the change")
    func noticeButtonDecides() throws {
        let session = try SecretServiceSession()
        defer { session.stop() }
        let notices = try NotificationServer(bus: session.environment, menuPick: "Merge")
        let home = try DaemonHome(root: session.home, extra: session.environment)
        let work = try home.vault("work.kdbx", from: CLIFixtures.kdbx31)
        let command = try home.passwordCommand(workPassword, name: "work.pw")
        #expect(try home.tool(["daemon", "add", work, "--password-command", command, "--policy", "ask"]).status == 0)
        let daemon = try DaemonProcess(home)
        #expect(daemon.waitFor("baseRecorded", vault: work), "\(daemon.outputText)")
        let edited = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), ["keepassxc-cli", "add", "-q", work, "Edited elsewhere"],
                                           input: Data((workPassword + "\n").utf8), environment: ["QT_QPA_PLATFORM": "offscreen"])
        #expect(edited.status == 0, "\(edited.standardError)")
        #expect(daemon.waitFor("decisionNeeded", vault: work), "\(daemon.outputText)")
        #expect(try eventually(within: 15) { try notices.displayed() > 0 }, "the decision notice is not on screen")
        try notices.openContextMenu()
        let merged = try eventually(within: 15) {
            guard daemon.state(of: work) == "watching" else { return false }
            return try home.titles(work, password: workPassword)?.contains("Edited elsewhere") == true
        }
        let offered = (try? String(contentsOfFile: notices.menuOffered, encoding: .utf8)) ?? "(the menu was not opened)"
        #expect(merged, "the button did not merge; the menu offered: \(offered); \(daemon.outputText)")
        #expect(offered.contains("Reload") && offered.contains("Overwrite"), "\(offered)")
    }

    @Test("a shared group's reference made elsewhere waits: no container written until its notice's Approve button is pressed, then the daemon exports it")
    func shareApprovedByNoticeButton() throws {
        let session = try SecretServiceSession()
        defer { session.stop() }
        let notices = try NotificationServer(bus: session.environment, menuPick: "Approve")
        let home = try DaemonHome(root: session.home, extra: session.environment)
        let work = try home.vault("work.kdbx", from: CLIFixtures.kdbx31)
        let folder = (work as NSString).deletingLastPathComponent, container = folder + "/team.kdbx"
        // The reference is added with another state directory (another device): not approved on this one.
        let elsewhere = folder + "/elsewhere-state"
        let added = try home.tool(["share", "add", work, "/Internet", "--export-to", "team.kdbx", "--container-password-stdin",
                                   "--password-stdin", "--state-dir", elsewhere], input: workPassword + "\nteam-share-pässword\n")
        #expect(added.status == 0, "\(added.standardError)")
        #expect(!FileManager.default.fileExists(atPath: container))
        let command = try home.passwordCommand(workPassword, name: "work.pw")
        #expect(try home.tool(["daemon", "add", work, "--password-command", command]).status == 0)
        let daemon = try DaemonProcess(home)
        #expect(daemon.waitFor("shareAwaitsApproval", vault: work), "\(daemon.outputText)")
        #expect(!FileManager.default.fileExists(atPath: container), "an unapproved reference wrote its container")
        #expect(try eventually(within: 15) { try notices.displayed() > 0 }, "the approval notice is not on screen")
        try notices.openContextMenu()
        let exported = try eventually(within: 30) { FileManager.default.fileExists(atPath: container) }
        let offered = (try? String(contentsOfFile: notices.menuOffered, encoding: .utf8)) ?? "(the menu was not opened)"
        #expect(exported, "the Approve button did not make the share work; the menu offered: \(offered); \(daemon.outputText)")
        #expect(daemon.waitFor("shareSynced", vault: work), "\(daemon.outputText)")
        let status = try daemon.status()
        let shares = status[work]?["shares"] as? [[String: Any]] ?? []
        #expect(shares.first?["approved"] as? Bool == true && shares.first?["type"] as? String == "export", "\(shares)")
        #expect(!daemon.outputText.contains("team-share-pässword"))
    }

    @Test("three vaults with three kinds of credentials: copies folded and noticed once per burst, pause, resume, decide, a changed key, remove, SIGTERM")
    func threeVaults() throws {
        let session = try SecretServiceSession()
        defer { session.stop() }
        let notices = try NotificationServer(bus: session.environment)
        let home = try DaemonHome(root: session.home, extra: session.environment)
        let personal = try home.vault("personal.kdbx", from: CLIFixtures.kdbx4)
        let family = try home.vault("family.kdbx", from: CLIFixtures.vault("py-4.0-keyfile-only-binary32.kdbx"))
        let work = try home.vault("work.kdbx", from: CLIFixtures.kdbx31)
        let command = try home.passwordCommand(personalPassword, name: "personal.pw")

        // add: credentials that do not open the vault add nothing (exit 3).
        let wrong = try home.tool(["daemon", "add", personal, "--password-command", "echo not-the-password"])
        #expect(wrong.status == 3, "\(wrong.standardError)")
        #expect(!FileManager.default.fileExists(atPath: home.configuration))
        #expect(try home.tool(["daemon", "add", personal, "--password-command", command]).status == 0)
        #expect(try home.tool(["daemon", "add", family, "--no-password", "--key-file", familyKey]).status == 0)
        #expect(try session.tool(["keyring", "store", work, "--password-stdin"], input: workPassword + "\n").status == 0)
        let keyring = try home.tool(["daemon", "add", work, "--password-from", "keyring", "--policy", "ask"])
        #expect(keyring.status == 0, "\(keyring.standardError)")
        // The file names references, never a password.
        let configuration = try String(contentsOfFile: home.configuration, encoding: .utf8)
        #expect(SecretScan.firstSecret(in: configuration) == nil)
        #expect(configuration.contains("password-from = keyring") && configuration.contains("key-file = \(familyKey)"))
        let listed = try home.tool(["daemon", "list", "--json"])
        #expect(listed.standardOutput.contains("\"keyring\"") && listed.standardOutput.contains("\"passwordCommand\""))

        let daemon = try DaemonProcess(home)
        for vault in [personal, family, work] { #expect(daemon.waitFor("baseRecorded", vault: vault), "\(vault): \(daemon.outputText)") }
        let firstStatus = try daemon.status()
        #expect(firstStatus[personal]?["credentials"] as? String == "passwordCommand")
        #expect(firstStatus[family]?["credentials"] as? String == "keyFile")
        #expect(firstStatus[work]?["credentials"] as? String == "keyring")

        // A burst of two conflict copies: both folded, one notice naming the vault and the entries.
        _ = try home.conflictCopy(of: personal, password: personalPassword, adding: "From the phone", device: "PHONE", second: 10)
        _ = try home.conflictCopy(of: personal, password: personalPassword, adding: "From the laptop", device: "LAPTOP", second: 11)
        #expect(daemon.waitFor("conflictCopyMerged", vault: personal, count: 2), "\(daemon.outputText)")
        let titles = try home.titles(personal, password: personalPassword) ?? []
        #expect(titles.contains("From the phone") && titles.contains("From the laptop"), "\(titles)")
        var received = try notices.waitForNotice(containing: "personal.kdbx: merged")
        let merged = received.filter { $0.summary.contains("personal.kdbx: merged") }
        #expect(merged.count == 1 && merged.first?.summary.contains("2 conflict copies") == true, "\(received.map(\.summary))")
        #expect(merged.first?.body.contains("From the phone") == true && merged.first?.application == "mypass-sync", "\(merged.map(\.body))")
        #expect((try daemon.status())[personal]?["lastMerge"] is [String: Any])

        // Paused: a copy is left alone until resumed, then folded.
        #expect(try home.tool(["daemon", "pause", personal]).status == 0)
        #expect(daemon.state(of: personal) == "paused")
        let waiting = try home.conflictCopy(of: personal, password: personalPassword, adding: "While paused", device: "TABLET", second: 12)
        #expect(!eventually(within: 1.5) { daemon.events("conflictCopyMerged", vault: personal).count > 2 }, "a paused vault was merged")
        #expect(FileManager.default.fileExists(atPath: waiting))
        #expect((try daemon.status())[personal]?["conflictCopies"] as? Int == 1)
        #expect(try home.tool(["daemon", "resume", personal]).status == 0)
        #expect(daemon.waitFor("conflictCopyMerged", vault: personal, count: 3), "\(daemon.outputText)")
        #expect(!FileManager.default.fileExists(atPath: waiting))

        // --policy ask: a change on disk waits for a decision, said in a notice; decide merges it.
        let edited = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), ["keepassxc-cli", "add", "-q", work, "Edited elsewhere"],
                                           input: Data((workPassword + "\n").utf8), environment: ["QT_QPA_PLATFORM": "offscreen"])
        #expect(edited.status == 0, "\(edited.standardError)")
        #expect(daemon.waitFor("decisionNeeded", vault: work), "\(daemon.outputText)")
        #expect(daemon.state(of: work) == "needsDecision")
        received = try notices.waitForNotice(containing: "work.kdbx: a decision is needed")
        #expect(received.contains { $0.summary.contains("work.kdbx: a decision is needed") }, "\(received.map(\.summary))")
        #expect(try home.tool(["daemon", "decide", personal, "merge"]).status == 2, "no decision waits there")
        let decided = try home.tool(["daemon", "decide", work, "merge"])
        #expect(decided.status == 0, "\(decided.standardError)")
        #expect(daemon.state(of: work) == "watching")
        #expect(try home.titles(work, password: workPassword)?.contains("Edited elsewhere") == true)

        // A vault whose key changed elsewhere reports an error; the others go on.
        let replacement = home.root.appendingPathComponent("other-key.kdbx").path
        try FileManager.default.copyItem(atPath: CLIFixtures.kdbx4, toPath: replacement)
        #expect(rename(replacement, family) == 0)
        #expect(daemon.waitFor("keyChanged", vault: family), "\(daemon.outputText)")
        #expect(daemon.state(of: family) == "error")
        received = try notices.waitForNotice(containing: "family.kdbx")
        _ = try home.conflictCopy(of: personal, password: personalPassword, adding: "After the key change", device: "PHONE", second: 13)
        #expect(daemon.waitFor("conflictCopyMerged", vault: personal, count: 4), "\(daemon.outputText)")

        // remove: the running daemon rereads its configuration and lets the vault go.
        let removed = try home.tool(["daemon", "remove", work])
        #expect(removed.status == 0 && removed.standardOutput.contains("reread"), "\(removed.standardOutput)")
        #expect(try daemon.status().keys.sorted() == [family, personal].sorted())

        // Every notice: our app name, a vault named, no secret.
        let history = try notices.history()
        #expect(!history.notices.isEmpty && history.notices.allSatisfy { $0.application == "mypass-sync" })
        #expect(history.notices.allSatisfy { notice in [personal, family, work].contains { notice.summary.contains(($0 as NSString).lastPathComponent) } })
        #expect(SecretScan.firstSecret(in: history.text) == nil)
        #expect(SecretScan.firstSecret(in: daemon.outputText + daemon.errorText) == nil)

        #expect(daemon.end() == 0)
        #expect((daemon.events.last?["kind"] as? String) == "stopped")
        #expect(try home.tool(["daemon", "status"]).status == 7, "no daemon runs any more")
    }

    @Test("a refused rollback waits for a decision: its notice offers Merge, Reload, Overwrite; merge puts the newer value back; a second one decided reload stays, this device's version kept aside")
    func refusedRollbackDecided() throws {
        let session = try SecretServiceSession()
        defer { session.stop() }
        let notices = try NotificationServer(bus: session.environment)
        let home = try DaemonHome(root: session.home, extra: session.environment)
        let personal = try home.vault("personal.kdbx", from: CLIFixtures.kdbx4)
        let command = try home.passwordCommand(personalPassword, name: "personal.pw")
        #expect(try home.tool(["daemon", "add", personal, "--password-command", command]).status == 0)
        let daemon = try DaemonProcess(home)
        #expect(daemon.waitFor("baseRecorded", vault: personal), "\(daemon.outputText)")
        func keepassxc(_ arguments: [String]) throws -> ProcessRunner.Outcome {
            try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), ["keepassxc-cli"] + arguments,
                                  input: Data((personalPassword + "\n").utf8), environment: ["QT_QPA_PLATFORM": "offscreen"])
        }
        func userName() throws -> String { try keepassxc(["show", "-q", "-a", "UserName", personal, "Internet/GitHub"]).output }
        /// Another device's older version put in the vault's place with one rename.
        func rollBack(to bytes: Data) throws {
            let old = home.root.appendingPathComponent("old-\(UUID().uuidString).kdbx")
            try bytes.write(to: old)
            #expect(rename(old.path, personal) == 0)
        }
        let older = try Data(contentsOf: URL(fileURLWithPath: personal))
        let edited = try keepassxc(["edit", "-q", "-u", "newer-user", personal, "Internet/GitHub"])
        #expect(edited.status == 0, "\(edited.standardError)")
        #expect(daemon.waitFor("reloaded", vault: personal), "\(daemon.outputText)")

        // The older version is held for the copy with the newer one (20 s), then refused: a decision waits.
        try rollBack(to: older)
        #expect(daemon.waitFor("refused", vault: personal, within: 40), "\(daemon.outputText)")
        #expect(daemon.state(of: personal) == "needsDecision")
        #expect(try userName().contains("alice"), "the refused version stays in place until a decision")
        let notice = try notices.waitForNotice(containing: "an older version was refused").first { $0.summary.contains("older version") }
        #expect(notice?.body.contains("Merge puts this device's newer values back") == true, "\(String(describing: notice))")
        let merged = try home.tool(["daemon", "decide", personal, "merge"])
        #expect(merged.status == 0 && merged.standardOutput.contains("merged back"), "\(merged.standardOutput)\(merged.standardError)")
        #expect(try userName().contains("newer-user"), "merge did not put the newer value back")
        #expect(daemon.state(of: personal) == "watching")
        #expect(try home.tool(["daemon", "decide", personal, "merge"]).status == 2, "no decision waits any more")

        // Rolled back again, decided reload: the older version stays, this device's is kept aside.
        try rollBack(to: older)
        #expect(daemon.waitFor("refused", vault: personal, count: 2, within: 40), "\(daemon.outputText)")
        #expect(daemon.events("restored", vault: personal).count == 1, "the merge decision restored once")
        let reloaded = try home.tool(["daemon", "decide", personal, "reload"])
        #expect(reloaded.status == 0 && reloaded.standardOutput.contains("taken as it is"), "\(reloaded.standardOutput)\(reloaded.standardError)")
        #expect(!eventually(within: 3) { daemon.events("restored", vault: personal).count > 1 }, "the reloaded rollback was restored later")
        #expect(try Data(contentsOf: URL(fileURLWithPath: personal)) == older, "the older version was not kept as it is")
        #expect(daemon.state(of: personal) == "watching")
        let kept = try home.tool(["conflicts", personal, "--merged", "--json"])
        #expect(kept.standardOutput.contains("set aside"), "\(kept.standardOutput)")

        // Another database (same password) in the vault's place: never merged; overwrite puts this device's back.
        let other = home.root.appendingPathComponent("other.kdbx").path
        let created = try home.tool(["db-create", other, "--kdf", "aes-kdf", "--kdf-rounds", "1000", "--password-stdin"], input: personalPassword + "\n")
        #expect(created.status == 0, "\(created.standardError)")
        #expect(rename(other, personal) == 0)
        #expect(daemon.waitFor("refused", vault: personal, count: 3, within: 40), "\(daemon.outputText)")
        let notMerged = try home.tool(["daemon", "decide", personal, "merge"])
        #expect(notMerged.status == 2 && notMerged.standardError.contains("different database"), "\(notMerged.standardError)")
        #expect(daemon.state(of: personal) == "needsDecision")
        let overwritten = try home.tool(["daemon", "decide", personal, "overwrite"])
        #expect(overwritten.status == 0, "\(overwritten.standardOutput)\(overwritten.standardError)")
        #expect(try userName().contains("alice"), "this device's version is not back")
        #expect(daemon.state(of: personal) == "watching")
        #expect(SecretScan.firstSecret(in: daemon.outputText + daemon.errorText) == nil)
        #expect(daemon.end() == 0)
    }

    @Test("the control socket: malformed, oversized and slow requests answered with an error, another user refused; no bus is logged once")
    func controlSocket() throws {
        // No session bus at all: notices are dropped, said once on standard error, never an error.
        let home = try DaemonHome(extra: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/bus"])
        defer { try? FileManager.default.removeItem(at: home.root) }
        let none = try home.tool(["daemon", "status"])
        #expect(none.status == 7 && none.standardError.contains("no daemon runs"), "\(none.standardError)")
        let personal = try home.vault("personal.kdbx", from: CLIFixtures.kdbx4)
        #expect(try home.tool(["daemon", "add", personal, "--password-command", home.passwordCommand(personalPassword, name: "pw")]).status == 0)
        // A configuration that is a symlink is read, never written through.
        let elsewhere = home.root.appendingPathComponent("dotfiles.conf").path
        try FileManager.default.moveItem(atPath: home.configuration, toPath: elsewhere)
        try FileManager.default.createSymbolicLink(atPath: home.configuration, withDestinationPath: elsewhere)
        #expect(try home.tool(["daemon", "list"]).standardOutput.contains(personal))
        let throughLink = try home.tool(["daemon", "remove", personal])
        #expect(throughLink.status != 0 && throughLink.standardError.contains("never written through"), "\(throughLink.standardError)")

        // A line a person got wrong is named and skipped; the rest runs.
        try (String(contentsOfFile: home.configuration, encoding: .utf8) + "colour = blue\n[vault relative.kdbx]\n")
            .write(toFile: home.configuration, atomically: true, encoding: .utf8)
        // A vault whose password command fails: an error of its own; the others run.
        let broken = try home.vault("broken.kdbx", from: CLIFixtures.kdbx4)
        try (String(contentsOfFile: home.configuration, encoding: .utf8) + "[vault \(broken)]\npassword-command = exit 1\n")
            .write(toFile: home.configuration, atomically: true, encoding: .utf8)
        let listed = try home.tool(["daemon", "list"])
        #expect(listed.status == 0 && listed.standardError.contains("line 11") && listed.standardError.contains("line 12"), "\(listed.standardError)")
        #expect(try home.tool(["daemon", "add", personal, "--password-command", "true"]).status == 2, "a file with bad lines is not rewritten")

        let daemon = try DaemonProcess(home)
        #expect(daemon.waitFor("baseRecorded", vault: personal))
        #expect(daemon.errorText.contains("line 11"), "\(daemon.errorText)")
        #expect(eventually(within: 10) { daemon.state(of: broken) == "error" })
        let brokenStatus = try daemon.status()[broken]
        #expect((brokenStatus?["detail"] as? String)?.contains("password command") == true, "\(String(describing: brokenStatus))")
        #expect(daemon.state(of: personal) == "watching")
        let table = try home.tool(["daemon", "status"])
        #expect(table.standardOutput.contains("VAULT") && table.standardOutput.contains("broken.kdbx") && table.standardOutput.contains("error"))
        let helper = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Helpers/control_request.py").path
        func send(_ mode: String, as user: [String] = []) throws -> String {
            let arguments = user.isEmpty ? ["python3", helper, home.socket, mode] : user + [helper, home.socket, mode]
            return try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), arguments).output
        }
        #expect(try send("malformed").contains("malformed request"))
        #expect(try send("oversized").contains("larger than"))
        #expect(try send("{\"request\": \"decide\", \"vault\": \"\(personal)\", \"decision\": \"explode\"}").contains("decide needs a decision"))
        #expect(try send("{\"request\": \"pause\", \"vault\": \"/not/configured.kdbx\"}").contains("not a configured vault"))
        let started = Date()
        #expect(try send("slow").contains("no complete request"))
        #expect(Date().timeIntervalSince(started) < 10, "a slow request is bounded in time")
        #expect(try send("{\"request\": \"status\"}").contains("\"ok\":true"), "the daemon still answers")
        let second = try home.tool(["daemon", "run"])
        #expect(second.status == 7 && second.standardError.contains("a daemon already runs"), "\(second.standardError)")

        // Another user: first the folder (0700) keeps them out; with it and the socket opened up,
        // the daemon itself refuses them (SO_PEERCRED).
        if getuid() == 0 {
            // The system's python (a per-user one, as pyenv's, is not open to another user).
            let nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3"]
            #expect(try send("{\"request\": \"status\"}", as: nobody).contains("error:"), "the 0700 folder lets another user in")
            chmod(home.root.path, 0o755)
            chmod(home.root.appendingPathComponent("run").path, 0o755)
            chmod((home.socket as NSString).deletingLastPathComponent, 0o755)
            chmod(home.socket, 0o666)
            let refused = try send("{\"request\": \"status\"}", as: nobody)
            #expect(refused.contains("refused: the daemon answers only its own user") && !refused.contains("vaults"), "\(refused)")
        }

        // A copy folded while there is no bus: one line on standard error, no error, no exit.
        _ = try home.conflictCopy(of: personal, password: personalPassword, adding: "No bus", device: "PHONE")
        _ = try home.conflictCopy(of: personal, password: personalPassword, adding: "Still no bus", device: "LAPTOP", second: 20)
        #expect(daemon.waitFor("conflictCopyMerged", vault: personal, count: 2))
        #expect(eventually(within: 10) { daemon.errorText.contains("desktop notices are not shown") }, "\(daemon.errorText)")
        #expect(daemon.end() == 0)
        #expect(daemon.errorText.components(separatedBy: "desktop notices are not shown").count == 2, "said once: \(daemon.errorText)")
        #expect(daemon.events("error", vault: personal).isEmpty, "no bus is not an error")
    }

    @Test("SIGHUP rereads an edited configuration (a vault added, the others untouched); SIGTERM in the middle of a merge finishes it and exits 0")
    func reloadAndStop() throws {
        let home = try DaemonHome(extra: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/bus"])
        defer { try? FileManager.default.removeItem(at: home.root) }
        let first = try home.vault("first.kdbx", from: CLIFixtures.kdbx4)
        let second = try home.vault("second.kdbx", from: CLIFixtures.kdbx4)
        let command = try home.passwordCommand(personalPassword, name: "pw")
        #expect(try home.tool(["daemon", "add", first, "--password-command", command]).status == 0)
        let hook = home.root.appendingPathComponent("commit").path
        let daemon = try DaemonProcess(home, environment: ["MYPASS_SYNC_BEFORE_COMMIT": hook])
        #expect(daemon.waitFor("baseRecorded", vault: first))
        #expect(try daemon.status().keys.sorted() == [first])

        // Edited by hand, then SIGHUP.
        try (String(contentsOfFile: home.configuration, encoding: .utf8) + "\n[vault \(second)]\npassword-command = \(command)\n")
            .write(toFile: home.configuration, atomically: true, encoding: .utf8)
        kill(daemon.process.processIdentifier, SIGHUP)
        #expect(daemon.waitFor("baseRecorded", vault: second), "\(daemon.errorText)")
        #expect(daemon.events("baseRecorded", vault: first).count == 1, "the vault already watched was not restarted")

        // A merge stopped just before its write (the debug-build hook): SIGTERM, then the write goes on.
        // On the vault SIGHUP added: its folder is watched too.
        _ = try home.conflictCopy(of: second, password: personalPassword, adding: "Merged while stopping", device: "PHONE")
        #expect(eventually(within: 20) { FileManager.default.fileExists(atPath: hook + ".waiting") },
                "\(daemon.outputText) \(daemon.errorText) \((try? FileManager.default.contentsOfDirectory(atPath: home.sync.path)) ?? [])")
        kill(daemon.process.processIdentifier, SIGTERM)
        usleep(300_000)  // The signal is in; the merge is still held.
        #expect(daemon.process.isRunning, "SIGTERM cut a merge off")
        _ = FileManager.default.createFile(atPath: hook + ".go", contents: Data())
        #expect(eventually(within: 15) { !daemon.process.isRunning })
        #expect(daemon.process.terminationStatus == 0, "\(daemon.errorText)")
        #expect(daemon.events("conflictCopyMerged", vault: second).count == 1, "\(daemon.outputText)")
        #expect(try home.titles(second, password: personalPassword)?.contains("Merged while stopping") == true, "the vault opens whole")
    }

    @Test("20 idle vaults cost no CPU and no wakeups: utime+stime and context switches of the daemon over 20 s; memory per vault")
    func idleCost() throws {
        let home = try DaemonHome(extra: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/bus"])
        defer { try? FileManager.default.removeItem(at: home.root) }
        let command = try home.passwordCommand(personalPassword, name: "pw")
        var vaults: [String] = []
        for index in 0..<20 {
            // Each in a folder of its own (20 inotify watches), the file copied once.
            let folder = home.sync.appendingPathComponent("v\(index)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let path = folder.appendingPathComponent("vault\(index).kdbx").path
            try FileManager.default.copyItem(atPath: CLIFixtures.kdbx4, toPath: path)
            vaults.append(path)
        }
        func configure(_ count: Int) throws {
            var text = "# \(count) vaults\n"
            for path in vaults.prefix(count) { text += "[vault \(path)]\npassword-command = \(command)\n" }
            try text.write(toFile: home.configuration, atomically: true, encoding: .utf8)
        }
        try FileManager.default.createDirectory(atPath: (home.configuration as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        // One vault first, then 19 more by SIGHUP: the memory they add, per vault.
        try configure(1)
        let daemon = try DaemonProcess(home)
        #expect(daemon.waitFor("baseRecorded", vault: vaults[0]))
        let pid = daemon.process.processIdentifier
        func residentKiB() -> Int {
            let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
            return status.split(separator: "\n").first { $0.hasPrefix("VmRSS") }
                .flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
        }
        usleep(500_000)  // Kept: the first check's memory released off the watch thread before it is measured.
        let residentWithOne = residentKiB()
        try configure(20)
        kill(pid, SIGHUP)
        for path in vaults { #expect(daemon.waitFor("baseRecorded", vault: path, within: 60), "\(path)") }
        // The daemon's own process (the helper exec'd into it), its CPU ticks and threads' wakeups.
        func ticks() -> Int {
            let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
            let fields = stat.split(separator: ")").last?.split(separator: " ") ?? []
            return fields.count > 13 ? (Int(fields[11]) ?? 0) + (Int(fields[12]) ?? 0) : -1
        }
        /// Context switches per thread (a thread sleeping without a timeout makes none). libdispatch's
        /// manager thread (the one waiting in epoll_wait) is counted apart: once any worker thread of
        /// its pool has existed (a merge on all cores, a prefetch, a signal handler) it keeps a
        /// one-second timer to watch the pool, a property of libdispatch on Linux, not of the daemon.
        func isDispatchManager(_ task: String) -> Bool {
            ((try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/syscall", encoding: .utf8)) ?? "").hasPrefix("232 ")
        }
        func switches() -> [String: Int] {
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
            return Dictionary(uniqueKeysWithValues: tasks.map { task in
                let status = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8)) ?? ""
                return (task, status.split(separator: "\n").filter { $0.hasPrefix("voluntary_ctxt_switches") || $0.hasPrefix("nonvoluntary_ctxt_switches") }
                    .compactMap { Int($0.split(separator: ":").last?.trimmingCharacters(in: .whitespaces) ?? "") }.reduce(0, +))
            })
        }
        usleep(1_000_000)  // The first checks' memory released off the watch threads.
        let (ticksBefore, switchesBefore, start) = (ticks(), switches(), Date())
        usleep(20_000_000)  // The measurement itself: 20 s of nothing happening.
        let (ticksAfter, switchesAfter) = (ticks(), switches())
        let seconds = Date().timeIntervalSince(start)
        let hertz = Double(sysconf(Int32(_SC_CLK_TCK)))
        let cpu = Double(ticksAfter - ticksBefore) / hertz
        let managers = Set(switchesAfter.keys.filter(isDispatchManager))
        let wakeups = Double(switchesAfter.filter { !managers.contains($0.key) }.map { task, count in count - (switchesBefore[task] ?? 0) }
            .reduce(0, +)) / seconds
        let managerWakeups = Double(switchesAfter.filter { managers.contains($0.key) }.map { task, count in count - (switchesBefore[task] ?? 0) }
            .reduce(0, +)) / seconds
        let resident = residentKiB()
        print("bench: daemon idle with 20 vaults: \(String(format: "%.3f", cpu)) s CPU over \(String(format: "%.1f", seconds)) s, "
              + "\(String(format: "%.1f", wakeups)) context switches/s of its own threads (libdispatch's pool monitor: \(String(format: "%.1f", managerWakeups))/s), resident \(resident / 1024) MiB, "
              + "\(max(0, resident - residentWithOne) / 19) KiB per vault beyond the first (small test vaults)")
        #expect(ticksBefore >= 0 && cpu <= 0.05, "idle CPU \(cpu) s over \(seconds) s")
        #expect(wakeups < 0.5, "\(wakeups) wakeups per second")
        #expect(daemon.end() == 0)
    }

    @Test("the user unit contrib/systemd/mypass-sync.service verifies and runs `daemon run`")
    func systemdUnit() throws {
        let unit = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("contrib/systemd/mypass-sync.service")
        let text = try String(contentsOf: unit, encoding: .utf8)
            .replacingOccurrences(of: "ExecStart=mypass-sync ", with: "ExecStart=\(try ToolRunner.binary().path) ")
        #expect(text.contains("daemon run") && text.contains("Restart=on-failure"))
        let directory = try CLIFixtures.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let runtime = directory.appendingPathComponent("run")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        func verify(_ text: String) throws -> ProcessRunner.Outcome {
            try text.write(to: directory.appendingPathComponent("mypass-sync.service"), atomically: true, encoding: .utf8)
            return try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/systemd-analyze"), ["verify", "--user", "--man=no", "mypass-sync.service"],
                                         environment: ["XDG_RUNTIME_DIR": runtime.path, "SYSTEMD_UNIT_PATH": directory.path + ":"])
        }
        let good = try verify(text)
        #expect(good.status == 0, "\(good.standardError)")
        #expect(try verify(text.replacingOccurrences(of: "ExecStart=", with: "ExecStrat=")).status != 0, "the check is real")
    }
}

import Foundation
import Testing
import TestSupport

/// A pause is a person's decision: a daemon killed and started again (systemd restarts it on
/// failure) keeps the vault paused, silently, until `resume` (real daemon processes, SIGKILL).
@Suite("daemon: a pause outlives the daemon", .serialized)
struct DaemonPauseRestartTests {
    @Test("pause, the daemon killed and started again: the vault stays paused and a copy waits; resume folds it")
    func pauseSurvivesRestart() throws {
        let home = try DaemonHome()
        defer { try? FileManager.default.removeItem(at: home.root) }
        let vault = try home.vault("personal.kdbx", from: CLIFixtures.kdbx4)
        let command = try home.passwordCommand(CLIFixtures.kdbx4Password, name: "personal.pw")
        #expect(try home.tool(["daemon", "add", vault, "--password-command", command]).status == 0)
        let first = try DaemonProcess(home)
        #expect(first.waitFor("baseRecorded", vault: vault), "\(first.outputText)")
        #expect(try home.tool(["daemon", "pause", vault]).status == 0)
        #expect(first.state(of: vault) == "paused")
        #expect(first.end(with: SIGKILL) != nil, "the daemon did not die")

        let second = try DaemonProcess(home)
        #expect(second.state(of: vault) == "paused", "a restart watched the paused vault again: \(String(describing: try? second.status()[vault]))")
        let copy = try home.conflictCopy(of: vault, password: CLIFixtures.kdbx4Password, adding: "While paused", device: "TABLET")
        // Whatever a watching daemon does with a copy, it does within a second or two; a paused one does nothing.
        #expect(!eventually(within: 3) { !second.events.isEmpty }, "the paused vault was read: \(second.outputText)")
        #expect(FileManager.default.fileExists(atPath: copy))
        #expect(try home.tool(["daemon", "resume", vault]).status == 0)
        #expect(second.waitFor("conflictCopyMerged", vault: vault), "\(second.outputText)")
        #expect(try home.titles(vault, password: CLIFixtures.kdbx4Password)?.contains("While paused") == true)
        #expect(second.end() == 0)

        // Resumed for good: the next daemon watches it.
        let third = try DaemonProcess(home)
        #expect(third.state(of: vault) != "paused")
        _ = third.end()
    }

    @Test("a vault removed while paused and added again is watched: the pause went with it")
    func pauseEndsWithRemove() throws {
        let home = try DaemonHome()
        defer { try? FileManager.default.removeItem(at: home.root) }
        let vault = try home.vault("personal.kdbx", from: CLIFixtures.kdbx4)
        let command = try home.passwordCommand(CLIFixtures.kdbx4Password, name: "personal.pw")
        #expect(try home.tool(["daemon", "add", vault, "--password-command", command]).status == 0)
        let first = try DaemonProcess(home)
        #expect(first.waitFor("baseRecorded", vault: vault), "\(first.outputText)")
        #expect(try home.tool(["daemon", "pause", vault]).status == 0)
        #expect(first.end() == 0)
        #expect(try home.tool(["daemon", "remove", vault]).status == 0)
        #expect(try home.tool(["daemon", "add", vault, "--password-command", command]).status == 0)
        let second = try DaemonProcess(home)
        #expect(second.state(of: vault) != "paused", "a pause outlived the vault's removal")
        _ = second.end()
    }
}

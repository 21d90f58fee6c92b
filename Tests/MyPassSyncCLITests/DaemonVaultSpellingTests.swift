import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// One vault named under several spellings (`/./`, `//`, a symlinked folder) is one vault: one
/// engine, found by any spelling.
@Suite("daemon: one engine per real vault file, whatever its spelling", .serialized)
struct DaemonVaultSpellingTests {
    @Test("three spellings of one vault in daemon.conf: the later two named as problems, one engine; pause and resume by any spelling reach it; add under another spelling updates it")
    func oneEnginePerRealFile() throws {
        let home = try DaemonHome(extra: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/bus"])
        defer { try? FileManager.default.removeItem(at: home.root) }
        let vault = try home.vault("personal.kdbx", from: CLIFixtures.kdbx4)
        let real = URL(fileURLWithPath: vault).resolvingSymlinksInPath().path
        let linkedFolder = home.root.appendingPathComponent("linked").path
        #expect(symlink(home.sync.path, linkedFolder) == 0)
        let dotted = home.sync.path + "/./personal.kdbx"
        let linked = linkedFolder + "/personal.kdbx"
        let doubled = home.sync.path + "//personal.kdbx"
        let command = try home.passwordCommand(CLIFixtures.kdbx4Password, name: "pw")
        try FileManager.default.createDirectory(atPath: (home.configuration as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        // Sections at lines 1, 4 and 7.
        try [dotted, linked, doubled].map { "[vault \($0)]\npassword-command = \(command)\n" }.joined(separator: "\n")
            .write(toFile: home.configuration, atomically: true, encoding: .utf8)

        let listed = try home.tool(["daemon", "list"])
        #expect(listed.standardError.contains("line 4: \(linked) names the same vault as line 1"), "\(listed.standardError)")
        #expect(listed.standardError.contains("line 7: \(doubled) names the same vault as line 1"), "\(listed.standardError)")

        let daemon = try DaemonProcess(home)
        #expect(daemon.waitFor("baseRecorded", vault: real), "\(daemon.outputText)")
        let running = try daemon.status().keys.sorted()
        #expect(running == [dotted], "one engine for one file: \(running)")
        let paused = try home.tool(["daemon", "pause", doubled])
        #expect(paused.status == 0, "\(paused.standardError)")
        #expect(daemon.state(of: dotted) == "paused")
        let resumed = try home.tool(["daemon", "resume", linked])
        #expect(resumed.status == 0, "\(resumed.standardError)")
        #expect(eventually(within: 15) { daemon.state(of: dotted) == "watching" })
        #expect(daemon.end() == 0)

        // A file naming it once: `daemon add` of another spelling updates that section.
        try "[vault \(dotted)]\npassword-command = \(command)\n".write(toFile: home.configuration, atomically: true, encoding: .utf8)
        let added = try home.tool(["daemon", "add", linked, "--password-command", command, "--policy", "ask"])
        #expect(added.status == 0 && added.standardOutput.contains("updated"), "\(added.standardOutput) \(added.standardError)")
        let configuration = try String(contentsOfFile: home.configuration, encoding: .utf8)
        #expect(configuration.components(separatedBy: "[vault ").count == 2 && configuration.contains("policy = ask"), "\(configuration)")
    }
}

import Foundation
import Synchronization
import Testing
import TestSupport

/// The main job under the daemon with a real notification server: a copy edited with keepassxc-cli,
/// an edit of the vault here, then the copy renamed in as a Syncthing conflict copy, for two of three
/// vaults at once, while `daemon status` is asked every half second. Every copy the daemon knows of is
/// folded (a lost wake-up once left one unfolded for good). Played in several rounds.
@Suite("daemon: no conflict copy left unfolded (dunst, status racing the copies)", .serialized)
struct DaemonWakeUpTests {
    static let password = CLIFixtures.kdbx4Password

    @Test("two of three vaults get a keepassxc-cli copy, an edit here and the copy renamed in while status polls: both folded, each round",
          arguments: 0..<2)
    func copiesFoldedWhileStatusPolls(round: Int) throws {
        let session = try SecretServiceSession()
        defer { session.stop() }
        let notices = try NotificationServer(bus: session.environment)
        let home = try DaemonHome(root: session.home, extra: session.environment)
        let vaults = try ["personal", "family", "work"].map { try home.vault("\($0).kdbx", from: CLIFixtures.kdbx4) }
        let command = try home.passwordCommand(Self.password, name: "vaults.pw")
        for vault in vaults { #expect(try home.tool(["daemon", "add", vault, "--password-command", command]).status == 0) }
        let daemon = try DaemonProcess(home)
        for vault in vaults { #expect(daemon.waitFor("baseRecorded", vault: vault), "\(vault): \(daemon.outputText)") }

        // Status requests racing everything below, every half second.
        let polling = Mutex(true)
        let poller = Thread {
            while polling.withLock({ $0 }) {
                _ = try? home.tool(["daemon", "status", "--json"])
                Thread.sleep(forTimeInterval: 0.5)
            }
        }
        poller.start()
        defer { polling.withLock { $0 = false } }

        let edited = Array(vaults.prefix(2))
        // Each copy made and edited by KeePassXC's command line outside the folder first.
        let works = try edited.enumerated().map { index, vault -> String in
            let work = home.root.appendingPathComponent("work-\(round)-\(index).kdbx").path
            try FileManager.default.copyItem(atPath: vault, toPath: work)
            let added = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), ["keepassxc-cli", "add", "-q", work, "From KeePassXC \(index)"],
                                              input: Data((Self.password + "\n").utf8), environment: ["QT_QPA_PLATFORM": "offscreen"])
            #expect(added.status == 0, "\(added.standardError)")
            return work
        }
        for (index, vault) in edited.enumerated() {
            let edit = try home.tool(["edit", vault, "/No URL", "--notes", "edited here \(index)", "--password-command", command])
            #expect(edit.status == 0, "\(edit.standardError)")
            let name = PathTextForTests.stem(of: vault) + ".sync-conflict-20261204-10101\(index)-PHONE0\(index).kdbx"
            #expect(rename(works[index], home.sync.appendingPathComponent(name).path) == 0)
        }
        for (index, vault) in edited.enumerated() {
            #expect(daemon.waitFor("conflictCopyMerged", vault: vault, within: 60),
                    "round \(round): \(vault)'s copy was never folded: \(String(describing: try? daemon.status()[vault])) \(daemon.outputText.suffix(1500))")
            let titles = try home.titles(vault, password: Self.password) ?? []
            #expect(titles.contains("From KeePassXC \(index)"), "round \(round): \(titles)")
        }
        // A status request that gets no answer (the machine loaded) is asked again; its failure is kept for the message.
        let lastFailure = Mutex<String?>(nil)
        #expect(eventually(within: 30) {
            do {
                return try daemon.status().values.allSatisfy { ($0["conflictCopies"] as? Int) == 0 }
            } catch {
                lastFailure.withLock { $0 = "\(error)" }
                return false
            }
        }, "a copy is still waiting: \(String(describing: try? daemon.status())); last status failure: \(lastFailure.withLock { $0 } ?? "none")")
        #expect(try notices.waitForNotice(containing: "merged a conflict copy").count >= 1)
        polling.withLock { $0 = false }
        #expect(daemon.end() == 0)
    }
}

/// File-name arithmetic for the tests, without NSString.
enum PathTextForTests {
    /// The file name of `path` without its extension.
    static func stem(of path: String) -> String {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        guard let dot = name.lastIndex(of: ".") else { return name }
        return String(name[..<dot])
    }
}

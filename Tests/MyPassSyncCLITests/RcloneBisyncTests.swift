import Foundation
import Testing
import TestSupport

/// Real rclone bisync — Debian 12's 1.60 (`..path1`/`..path2`) and the current release that
/// scripts/setup keeps in `.build/tools` (`.conflict1`/`.conflict2`, `--conflict-resolve`) — between two
/// device folders and a shared folder standing in for the remote, each device running the shipped wrapper (`contrib/rclone/mypass-sync-bisync`:
/// `mypass-sync watch --once` before and after each bisync), with `--check-access` as docs/engines/rclone.md
/// says. Concurrent edits of one entry with mypass-sync on one device and keepassxc-cli on the other.
@Suite("rclone bisync: a vault renamed aside is rebuilt where it was renamed (real rclone)", .serialized)
struct RcloneBisyncTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let wrapper = repository.appendingPathComponent("contrib/rclone/mypass-sync-bisync").path

    /// The rclone releases the tests run.
    enum Release: String, CaseIterable, CustomTestStringConvertible {
        /// Debian 12's package.
        case debian = "/usr/bin/rclone"
        /// The current release (scripts/setup installs it).
        case current = ".build/tools/rclone-current/bin/rclone"

        var path: String { self == .debian ? rawValue : RcloneBisyncTests.repository.appendingPathComponent(rawValue).path }
        var testDescription: String { self == .debian ? "rclone 1.60 (Debian 12)" : "rclone 1.75 (current release)" }
    }

    /// The remote and two devices, each folder holding the vault and the `RCLONE_TEST` file of
    /// `--check-access`, as docs/engines/rclone.md sets them up: the file made on the first device, then each
    /// device bisynced once with `--resync`.
    final class Devices {
        let root: URL
        let remote: URL
        let folders: [String: URL]
        let passwordFile: String
        let environment: [String: String]
        let release: Release

        init(_ release: Release) throws {
            self.release = release
            root = try CLIFixtures.scratch()
            remote = root.appendingPathComponent("remote")
            folders = ["a": root.appendingPathComponent("a"), "b": root.appendingPathComponent("b")]
            for folder in [remote, root.appendingPathComponent("home")] + folders.values {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            }
            passwordFile = root.appendingPathComponent("pw.txt").path
            try Data((ScratchVault.password + "\n").utf8).write(to: URL(fileURLWithPath: passwordFile))
            environment = ["HOME": root.appendingPathComponent("home").path, "MYPASS_SYNC": try ToolRunner.binary().path,
                           "RCLONE_CONFIG": root.appendingPathComponent("home/rclone.conf").path, "PATH": "/usr/bin:/bin",
                           "RCLONE": release.path, "XDG_CONFIG_HOME": root.appendingPathComponent("config").path]
            let a = folders["a"]!
            try FileManager.default.copyItem(atPath: CLIFixtures.kdbx4, toPath: a.appendingPathComponent("vault.kdbx").path)
            try Data("access check\n".utf8).write(to: a.appendingPathComponent("RCLONE_TEST"))
            for device in ["a", "b"] {
                let first = try rclone(["bisync", folders[device]!.path, remote.path, "--resync", "--workdir", workdir(device)])
                #expect(first.status == 0, "\(first.standardError)")
            }
        }

        deinit { try? FileManager.default.removeItem(at: root) }

        func vault(_ device: String) -> String { folders[device]!.appendingPathComponent("vault.kdbx").path }
        func workdir(_ device: String) -> String { root.appendingPathComponent("bisync-\(device)").path }
        func state(_ device: String) -> String { root.appendingPathComponent("state-\(device)").path }

        func rclone(_ arguments: [String]) throws -> ProcessRunner.Outcome {
            try ProcessRunner.run(URL(fileURLWithPath: release.path), arguments, environment: environment)
        }

        /// One run of the shipped wrapper on `device`; its JSON event lines.
        @discardableResult
        func wrapper(_ device: String, _ rcloneOptions: [String] = []) throws -> (status: Int32, events: [[String: Any]], errors: String) {
            let outcome = try ProcessRunner.run(
                URL(fileURLWithPath: "/bin/bash"),
                [RcloneBisyncTests.wrapper, vault(device), remote.path, "--password-command", "cat '\(passwordFile)'", "--state-dir", state(device),
                 "--", "--check-access", "--workdir", workdir(device)] + rcloneOptions,
                environment: environment)
            let events = outcome.output.split(separator: "\n").compactMap {
                (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
            }
            return (outcome.status, events, outcome.standardError)
        }

        /// `mypass-sync watch --once --json` on `device`, as the wrapper runs it.
        func watchOnce(_ device: String) throws -> ToolRunner.Outcome {
            try ToolRunner.run(["watch", "--once", "--json", vault(device), "--password-command", "cat '\(passwordFile)'", "--state-dir", state(device)])
        }

        /// A plain `rclone bisync` on `device`, as if its wrapper had stopped after the bisync.
        func bareBisync(_ device: String, _ options: [String] = []) throws -> ProcessRunner.Outcome {
            try rclone(["bisync", folders[device]!.path, remote.path, "--check-access", "--workdir", workdir(device)] + options)
        }

        /// The conflict copies of the vault in `device`'s folder.
        func copies(_ device: String) throws -> [String] {
            try listings()[device]!.filter { $0 != "RCLONE_TEST" && $0 != "vault.kdbx" }
        }

        /// Both devices record the version they synced, then each edits the GitHub entry at once — a
        /// its user name, b its URL — one with keepassxc-cli (`keePassXCOn`), the other with mypass-sync.
        func diverge(keePassXCOn: String) throws {
            try wrapper("a")
            try wrapper("b")
            for (device, edit) in [("a", ["-u", "user-from-a"]), ("b", ["--url", "https://from-b.example"])] {
                if device == keePassXCOn { try editWithKeePassXC(device, edit) } else { try editWithMypassSync(device, edit) }
            }
        }

        func editWithMypassSync(_ device: String, _ arguments: [String]) throws {
            let outcome = try ToolRunner.run(["edit", vault(device), "Internet/GitHub"] + arguments
                                             + ["--password-command", "cat '\(passwordFile)'", "--state-dir", state(device)])
            #expect(outcome.status == 0, "\(outcome.standardError)")
        }

        func editWithKeePassXC(_ device: String, _ arguments: [String]) throws {
            let outcome = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"),
                                                ["keepassxc-cli", "edit", "-q"] + arguments + [vault(device), "Internet/GitHub"],
                                                input: Data((ScratchVault.password + "\n").utf8), environment: ["QT_QPA_PLATFORM": "offscreen"])
            #expect(outcome.status == 0, "\(outcome.standardError)")
        }

        func show(_ path: String) throws -> String {
            try ToolRunner.run(["show", path, "Internet/GitHub", "--password-command", "cat '\(passwordFile)'"]).standardOutput
        }

        /// The names in each folder (the remote's included).
        func listings() throws -> [String: [String]] {
            var listings = ["remote": try FileManager.default.contentsOfDirectory(atPath: remote.path).sorted()]
            for (device, folder) in folders { listings[device] = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() }
            return listings
        }

        /// Every folder holds the same vault and nothing else but `RCLONE_TEST`, with both edits.
        func expectInStep(_ expected: [String], sourceLocation: SourceLocation = #_sourceLocation) throws {
            let listings = try listings()
            for (folder, names) in listings {
                #expect(names == ["RCLONE_TEST", "vault.kdbx"], "\(folder): \(names)", sourceLocation: sourceLocation)
            }
            let bytes = try [remote, folders["a"]!, folders["b"]!].map { try Data(contentsOf: $0.appendingPathComponent("vault.kdbx")) }
            #expect(Set(bytes).count == 1, "the folders hold different vaults", sourceLocation: sourceLocation)
            let shown = try show(vault("a"))
            for text in expected { #expect(shown.contains(text), "\(text) missing: \(shown)", sourceLocation: sourceLocation) }
        }
    }

    static func kinds(_ events: [[String: Any]]) -> [String] { events.compactMap { $0["kind"] as? String } }

    @Test("both devices edit one entry (mypass-sync, keepassxc-cli); bisync renames both versions and leaves no vault; the device where it ran rebuilds it; every folder ends in step",
          arguments: Release.allCases)
    func concurrentEdits(release: Release) throws {
        let devices = try Devices(release)
        try devices.diverge(keePassXCOn: "b")
        let b = try devices.wrapper("b")  // b's edit reaches the remote
        #expect(b.status == 0, "\(b.errors)")
        let a = try devices.wrapper("a")  // the conflict: renamed aside on a and the remote, rebuilt on a
        #expect(a.status == 0, "\(a.errors)")
        #expect(Self.kinds(a.events).contains("rebuiltFromCopy"), "\(Self.kinds(a.events)) \(a.errors)")
        #expect(a.errors.contains("Renaming Path1 copy"), "bisync made no conflict copies: \(a.errors)")
        let taken = try devices.wrapper("b")
        #expect(!Self.kinds(taken.events).contains("rebuiltFromCopy"), "\(Self.kinds(taken.events))")
        try devices.expectInStep(["UserName: user-from-a", "URL: https://from-b.example"])
    }

    @Test("the device that only received the copies waits for the rebuilt vault (no second rebuild), then takes it; none is left behind",
          arguments: Release.allCases)
    func receivedCopiesWait(release: Release) throws {
        let devices = try Devices(release)
        try devices.diverge(keePassXCOn: "a")
        let sent = try devices.wrapper("b")  // b's edit reaches the remote
        #expect(sent.status == 0, "\(sent.errors)")
        // a: the wrapper's first half only (its version recorded, then bisync): both versions renamed aside.
        let watchA = try devices.watchOnce("a")
        #expect(watchA.status == 0, "\(watchA.standardError)")
        let bare = try devices.bareBisync("a")
        #expect(bare.status == 0, "\(bare.standardError)")
        #expect(!FileManager.default.fileExists(atPath: devices.vault("a")), "bisync left a vault on a")
        // b's bisync deletes its vault (unchanged there) and brings both copies: b only received them.
        let received = try devices.wrapper("b")
        #expect(Self.kinds(received.events).contains("waitingForRebuild"), "\(Self.kinds(received.events)) \(received.errors)")
        #expect(!Self.kinds(received.events).contains("rebuiltFromCopy"))
        #expect(!FileManager.default.fileExists(atPath: devices.vault("b")))
        let copiesOnB = try devices.copies("b")
        #expect(copiesOnB.count == 2, "\(copiesOnB)")
        // a rebuilds (its own version was renamed aside there) and sends the vault; b takes it.
        let rebuilt = try devices.wrapper("a")
        #expect(Self.kinds(rebuilt.events).contains("rebuiltFromCopy"), "\(Self.kinds(rebuilt.events)) \(rebuilt.errors)")
        let taken = try devices.wrapper("b")
        #expect(taken.status == 0, "\(taken.errors)")
        try devices.expectInStep(["UserName: user-from-a", "URL: https://from-b.example"])
    }

    @Test("a rebuild made outside the wrapper (a watch run by hand after a bare bisync) is still passed on: the next wrapper run forces the deletions through",
          arguments: Release.allCases)
    func rebuiltByHand(release: Release) throws {
        let devices = try Devices(release)
        try devices.diverge(keePassXCOn: "b")
        try devices.wrapper("b")
        #expect(try devices.watchOnce("a").status == 0)
        #expect(try devices.bareBisync("a").status == 0)
        let byHand = try devices.watchOnce("a")
        #expect(byHand.standardOutput.contains("rebuiltFromCopy"), "\(byHand.standardOutput) \(byHand.standardError)")
        // A bisync without --force now refuses: two of the three files it listed are gone.
        let refused = try devices.bareBisync("a")
        #expect(refused.status != 0 && refused.standardError.contains("too many deletes"), "\(refused.standardError)")
        let passed = try devices.wrapper("a")
        #expect(passed.status == 0, "\(passed.errors)")
        try devices.wrapper("b")
        try devices.expectInStep(["UserName: user-from-a", "URL: https://from-b.example"])
    }

    @Test("--conflict-resolve newer (rclone 1.66+): the newer version stays the vault, the loser is a copy that is merged in on the device where bisync ran, whichever side won; nothing is left behind",
          arguments: [true, false])
    func conflictResolveNewer(aIsNewer: Bool) throws {
        let devices = try Devices(.current)
        try devices.wrapper("a")
        try devices.wrapper("b")
        // The later edit is the newer file.
        if aIsNewer {
            try devices.editWithKeePassXC("b", ["--url", "https://from-b.example"])
            waitForNextClockSecond()  // the next edit is stamped a second later (KDBX times: whole seconds)
            try devices.editWithMypassSync("a", ["-u", "user-from-a"])
        } else {
            try devices.editWithMypassSync("a", ["-u", "user-from-a"])
            waitForNextClockSecond()  // the next edit is stamped a second later (KDBX times: whole seconds)
            try devices.editWithKeePassXC("b", ["--url", "https://from-b.example"])
        }
        let sent = try devices.wrapper("b", ["--conflict-resolve", "newer"])
        #expect(sent.status == 0, "\(sent.errors)")
        let merged = try devices.wrapper("a", ["--conflict-resolve", "newer"])
        #expect(merged.status == 0, "\(merged.errors)")
        #expect(merged.errors.contains("determined the winner"), "\(merged.errors)")
        #expect(Self.kinds(merged.events).contains("conflictCopyMerged"), "\(Self.kinds(merged.events))")
        #expect(!Self.kinds(merged.events).contains("rebuiltFromCopy"))
        try devices.wrapper("b", ["--conflict-resolve", "newer"])
        try devices.expectInStep(["UserName: user-from-a", "URL: https://from-b.example"])
    }

    @Test("rclone's --conflict-suffix cloud,local given in the device settings: its copies are recognised, the vault rebuilt, every folder in step")
    func configuredSuffix() throws {
        let devices = try Devices(.current)
        let config = devices.root.appendingPathComponent("config/mypass-sync")
        try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
        try Data(#"{"rcloneConflictSuffix": "cloud,local"}"#.utf8).write(to: config.appendingPathComponent("config.json"))
        try devices.diverge(keePassXCOn: "b")
        try devices.wrapper("b", ["--conflict-suffix", "cloud,local"])
        // No watcher saw a's edit: the save itself noted which file the vault is.
        let bare = try devices.bareBisync("a", ["--conflict-suffix", "cloud,local"])
        #expect(bare.status == 0, "\(bare.standardError)")
        #expect(try devices.copies("a") == ["vault.kdbx.cloud1", "vault.kdbx.local1"])
        // The vault is gone: with the setting its copies are listed; without it there is nothing (exit 7).
        let configured = try ToolRunner.run(["conflicts", devices.vault("a"), "--json"], environment: devices.environment)
        #expect(configured.status == 0 && configured.standardOutput.contains("vault.kdbx.cloud1"), "\(configured.standardOutput)")
        let unconfigured = try ToolRunner.run(["conflicts", devices.vault("a"), "--json"])
        #expect(unconfigured.status == 7 && !unconfigured.standardOutput.contains("cloud1"), "\(unconfigured.standardOutput)")
        let rebuilt = try devices.wrapper("a", ["--conflict-suffix", "cloud,local"])
        #expect(Self.kinds(rebuilt.events).contains("rebuiltFromCopy"), "\(Self.kinds(rebuilt.events)) \(rebuilt.errors)")
        try devices.wrapper("b", ["--conflict-suffix", "cloud,local"])
        try devices.expectInStep(["UserName: user-from-a", "URL: https://from-b.example"])
    }
}

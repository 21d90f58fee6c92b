import Foundation
import KDBXFormat
import MyPassCore
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The scratch vault of the sync tests, whose runs differ only in that `status` gets no password and
/// `export` no state directory.
private struct SyncFixture {
    private let scratch: ScratchVault
    var directory: URL { scratch.directory }
    var vault: String { scratch.vault }
    static let password = ScratchVault.password

    init() throws {
        scratch = try ScratchVault()
    }

    /// Runs a command with the password on stdin (unless `status`) and this fixture's state directory
    /// (unless `export`, which keeps no state).
    func run(_ arguments: [String], extraInput: String = "", environment: [String: String] = [:]) throws -> ToolRunner.Outcome {
        let state = directory.appendingPathComponent("state").path
        var options: [String] = []
        if arguments.first != "status" { options.append("--password-stdin") }
        if arguments.first != "export" { options += ["--state-dir", state] }
        return try ToolRunner.run(arguments + options, input: Self.password + "\n" + extraInput, environment: environment)
    }

    func titles() throws -> [String] {
        let export = try run(["export", vault])
        let json = try JSONSerialization.jsonObject(with: Data(export.standardOutput.utf8)) as? [String: Any]
        var titles: [String] = []
        func walk(_ group: [String: Any]) {
            for entry in group["entries"] as? [[String: Any]] ?? [] { titles.append(entry["title"] as? String ?? "") }
            for child in group["groups"] as? [[String: Any]] ?? [] { walk(child) }
        }
        if let root = json?["root"] as? [String: Any] { walk(root) }
        return titles
    }
}

@Suite("Entry commands, status and resolve over durable saves (end to end)", .serialized)
struct SyncCommandTests {
    @Test("add, show, edit, mv, rm, search and ls work and keep the file readable by keepassxc-cli")
    func entryCommands() throws {
        let fixture = try SyncFixture()
        defer { try? FileManager.default.removeItem(at: fixture.directory) }
        #expect(try fixture.run(["add", fixture.vault, "/Internet/Example", "-u", "me", "--url", "https://example.org", "--entry-password-stdin"],
                                extraInput: "ex-secret\n").status == 0)
        let shown = try fixture.run(["show", fixture.vault, "Internet/Example"])
        #expect(shown.standardOutput.contains("UserName: me"))
        #expect(shown.standardOutput.contains("Password: PROTECTED"))
        #expect(!shown.standardOutput.contains("ex-secret"))
        #expect(try fixture.run(["show", "--reveal", fixture.vault, "Internet/Example"]).standardOutput.contains("Password: ex-secret"))
        #expect(try fixture.run(["edit", fixture.vault, "Internet/Example", "--generate", "--length", "30"]).status == 0)
        let revealed = try fixture.run(["show", "--reveal", fixture.vault, "Internet/Example"]).standardOutput
        let generated = revealed.split(separator: "\n").first { $0.hasPrefix("Password: ") }.map { String($0.dropFirst(10)) }
        #expect(generated?.count == 30)
        #expect(try fixture.run(["mv", fixture.vault, "Internet/Example", "/Internet/Mail"]).standardOutput.contains("/Internet/Mail/Example"))
        #expect(try fixture.run(["search", fixture.vault, "https://example.org"]).standardOutput == "/Internet/Mail/Example\n")
        #expect(try fixture.run(["rm", fixture.vault, "Internet/Mail/Example"]).standardOutput.contains("Recycle Bin"))
        #expect(try fixture.run(["ls", "-R", fixture.vault]).standardOutput.contains("Recycle Bin/\n  Example"))
        #expect(try fixture.run(["rm", fixture.vault, "/Nope"]).status == 2)
        let kxc = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), ["keepassxc-cli", "ls", "-q", "-R", fixture.vault],
                                        input: Data((SyncFixture.password + "\n").utf8), environment: ["QT_QPA_PLATFORM": "offscreen"])
        #expect(kxc.status == 0)
        #expect(kxc.output.contains("Example"))
    }

    @Test("KeePassXC changes the vault after we opened it: our add merges both changes")
    func externalWriter() throws {
        let fixture = try SyncFixture()
        defer { try? FileManager.default.removeItem(at: fixture.directory) }
        // Our session reads the vault (the state records it), then KeePassXC edits the file.
        #expect(try fixture.run(["ls", fixture.vault]).status == 0)
        let status1 = try fixture.run(["status", fixture.vault])
        #expect(status1.standardOutput.contains("unchanged since this device last synced it"))
        let kxc = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), ["keepassxc-cli", "add", "-q", "-u", "k", fixture.vault, "From KeePassXC"],
                                        input: Data((SyncFixture.password + "\n").utf8), environment: ["QT_QPA_PLATFORM": "offscreen"])
        #expect(kxc.status == 0, "\(kxc.standardError)")
        #expect(try fixture.run(["status", fixture.vault]).standardOutput.contains("changed on disk since"))
        // A working copy with our own unsaved edit (made from the version we synced), resolved by merging.
        let working = fixture.directory.appendingPathComponent("working.kdbx").path
        try FileManager.default.copyItem(atPath: CLIFixtures.kdbx4, toPath: working)
        #expect(try fixture.run(["add", working, "/Mine"]).status == 0)
        let resolved = try fixture.run(["resolve", fixture.vault, "--working", working, "--merge"])
        #expect(resolved.status == 0, "\(resolved.standardError)")
        let titles = try fixture.titles()
        #expect(titles.contains("From KeePassXC"))
        #expect(titles.contains("Mine"))
    }

    @Test("four processes adding 50 entries each at the same time, KeePassXC editing in between: all present")
    func concurrentWriters() throws {
        let fixture = try SyncFixture()
        defer { try? FileManager.default.removeItem(at: fixture.directory) }
        let before = try fixture.titles().count
        let binary = try ToolRunner.binary()
        let state = fixture.directory.appendingPathComponent("state").path
        /// Each writer runs its adds in a shell loop; the four loops run at once.
        func writers(_ range: ClosedRange<Int>) throws {
            let processes = try (0..<4).map { writer -> Process in
                let script = "for i in $(seq \(range.lowerBound) \(range.upperBound)); do printf '%s\\n' \"$PW\" | \"$BIN\" add --password-stdin --state-dir \"$STATE\" \"$VAULT\" \"/w\(writer)-$i\" >/dev/null || exit 1; done"
                let process = Process()
                process.executableURL = URL(fileURLWithPath: "/bin/sh")
                process.arguments = ["-c", script]
                process.environment = ProcessInfo.processInfo.environment.merging(
                    ["PW": SyncFixture.password, "BIN": binary.path, "STATE": state, "VAULT": fixture.vault]) { $1 }
                try process.run()
                return process
            }
            for process in processes { process.waitUntilExit() }
            #expect(processes.allSatisfy { $0.terminationStatus == 0 })
        }
        try writers(1...25)
        let kxc = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), ["keepassxc-cli", "add", "-q", fixture.vault, "KeePassXC was here"],
                                        input: Data((SyncFixture.password + "\n").utf8), environment: ["QT_QPA_PLATFORM": "offscreen"])
        #expect(kxc.status == 0, "\(kxc.standardError)")
        try writers(26...50)
        let titles = try fixture.titles()
        #expect(titles.contains("KeePassXC was here"))
        #expect(titles.count == before + 201)
        for writer in 0..<4 {
            #expect(titles.filter { $0.hasPrefix("w\(writer)-") }.count == 50)
        }
    }

    @Test("--backup keeps the replaced version; temp files of dead writers are cleaned at the next save")
    func backupAndCleanup() throws {
        let fixture = try SyncFixture()
        defer { try? FileManager.default.removeItem(at: fixture.directory) }
        let before = try Data(contentsOf: URL(fileURLWithPath: fixture.vault))
        let stale = fixture.directory.appendingPathComponent(".mypass-sync-tmp-vault.kdbx-dead").path
        FileManager.default.createFile(atPath: stale, contents: Data("half a vault".utf8))
        var old = utimbuf(actime: time(nil) - 7200, modtime: time(nil) - 7200)
        utime(stale, &old)
        let result = try fixture.run(["add", "--backup", fixture.vault, "/With backup"])
        #expect(result.status == 0)
        #expect(result.standardError.contains("removed 1 temp file"))
        #expect(!FileManager.default.fileExists(atPath: stale))
        #expect(try Data(contentsOf: URL(fileURLWithPath: fixture.vault + ".bak")) == before)
        #expect(try FileManager.default.attributesOfItem(atPath: fixture.vault + ".bak")[.posixPermissions] as? Int == 0o600)
    }

    @Test("killed at random points of saves, the vault always opens as the old or the new version")
    func crashes() throws {
        let fixture = try SyncFixture()
        defer { try? FileManager.default.removeItem(at: fixture.directory) }
        let binary = try ToolRunner.binary()
        let state = fixture.directory.appendingPathComponent("state").path
        var count = try fixture.titles().count
        var generator = SystemRandomNumberGenerator()
        for round in 0..<200 {
            let process = Process()
            process.executableURL = binary
            process.arguments = ["add", "--password-stdin", "--state-dir", state, fixture.vault, "/crash-\(round)"]
            let input = Pipe()
            process.standardInput = input
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            input.fileHandleForWriting.write(Data((SyncFixture.password + "\n").utf8))
            try input.fileHandleForWriting.close()
            usleep(UInt32.random(in: 0...50_000, using: &generator))  // Kept: a seeded random moment to kill it at (not a wait for anything).
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            let titles = try fixture.titles()
            #expect(titles.count == count || titles.count == count + 1, "round \(round): \(titles.count) entries, expected \(count) or \(count + 1)")
            count = titles.count
        }
        // Temp files of killed writers may remain; the vault itself always opened above.
    }

    @Test("an injected ENOSPC leaves the vault byte for byte, removes the temp file and exits 7")
    func injectedFault() throws {
        let fixture = try SyncFixture()
        defer { try? FileManager.default.removeItem(at: fixture.directory) }
        let before = try Data(contentsOf: URL(fileURLWithPath: fixture.vault))
        // Only the vault's own temp file and rename count (the sync state is written beside, in state/).
        let temp = fixture.directory.path + "/.mypass-sync-tmp"
        let faults = ["write:1:ENOSPC:\(temp)", "fsync:1:EIO:\(temp),fsync:2:EIO:\(temp)", "rename:1:EIO:\(fixture.vault)",
                      "open:1:EACCES:\(temp)", "write:1:short:\(temp),write:2:EIO:\(temp)", "close:1:EIO:\(temp)"]
        for (index, fault) in faults.enumerated() {
            let result = try fixture.run(["add", fixture.vault, "/never-\(index)"], environment: ["MYPASS_SYNC_FAULTS": fault])
            #expect(result.status == 7, "\(fault): \(result.standardError)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: fixture.vault)) == before, "\(fault)")
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: fixture.directory.path).filter { $0.hasPrefix(".mypass-sync-tmp-") }
            #expect(leftovers.isEmpty, "\(fault): \(leftovers)")
        }
    }
}

@Suite("conflicts: sync-conflict copies folded in, kept outside the folder (end to end)", .serialized)
struct ConflictsCommandTests {
    @Test("Syncthing and Dropbox copies are merged, kept in the state directory and removed from the folder; others left alone")
    func foldCopies() throws {
        let directory = try CLIFixtures.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let vault = directory.appendingPathComponent("pw.kdbx").path
        let state = directory.appendingPathComponent("state").path
        let password = CLIFixtures.kdbx31Password
        try FileManager.default.copyItem(atPath: CLIFixtures.kdbx31, toPath: vault)
        #expect(try ToolRunner.run(["ls", "--password-stdin", "--state-dir", state, vault], input: password + "\n").status == 0)
        let syncthing = directory.appendingPathComponent("pw.sync-conflict-20261129-101010-PHONE.kdbx").path
        let dropbox = directory.appendingPathComponent("pw (Alice's conflicted copy 2026-11-29).kdbx").path
        let foreign = directory.appendingPathComponent("pw.sync-conflict-20261129-111111-OTHER.kdbx").path
        try FileManager.default.copyItem(atPath: vault, toPath: syncthing)
        try FileManager.default.copyItem(atPath: vault, toPath: dropbox)
        try FileManager.default.copyItem(atPath: CLIFixtures.kdbx4, toPath: foreign)
        let kxc = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), ["keepassxc-cli", "add", "-q", syncthing, "From phone"],
                                        input: Data((password + "\n").utf8), environment: ["QT_QPA_PLATFORM": "offscreen"])
        #expect(kxc.status == 0)
        #expect(try ToolRunner.run(["add", "--password-stdin", "--state-dir", directory.appendingPathComponent("other").path, dropbox, "/From laptop"],
                                   input: password + "\n").status == 0)
        let listing = try ToolRunner.run(["conflicts", directory.path])
        #expect(listing.standardOutput.contains("3 conflict copies"))
        let dry = try ToolRunner.run(["conflicts", "--merge", "--dry-run", "--password-stdin", "--state-dir", state, directory.path], input: password + "\n")
        #expect(dry.standardOutput.contains("wouldMerge"))
        #expect(FileManager.default.fileExists(atPath: syncthing))
        let merged = try ToolRunner.run(["conflicts", "--merge", "--json", "--password-stdin", "--state-dir", state, directory.path], input: password + "\n")
        #expect(merged.status == 0, "\(merged.standardError)")
        #expect(merged.standardOutput.contains("\"otherCredentials\""))
        #expect(!FileManager.default.fileExists(atPath: syncthing) && !FileManager.default.fileExists(atPath: dropbox))
        #expect(FileManager.default.fileExists(atPath: foreign))
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("merged-conflicts").path))
        let kept = try ToolRunner.run(["conflicts", "--merged", "--json", "--state-dir", state, vault])
        #expect(kept.status == 0)
        let report = try JSONSerialization.jsonObject(with: Data(kept.standardOutput.utf8)) as? [String: Any]
        let listed = ((report?["vaults"] as? [[String: Any]])?.first?["merged"] as? [[String: Any]]) ?? []
        #expect(Set(listed.compactMap { $0["originalName"] as? String })
            == ["pw.sync-conflict-20261129-101010-PHONE.kdbx", "pw (Alice's conflicted copy 2026-11-29).kdbx"])
        for path in listed.compactMap({ $0["path"] as? String }) {
            #expect(path.hasPrefix(state + "/"), "kept inside the synced folder: \(path)")
            #expect(try KDBXReader.open(Data(contentsOf: URL(fileURLWithPath: path)), key: CompositeKey(password: password)).vault.root.entries.count > 0)
        }
        let titles = try ToolRunner.run(["ls", "--password-stdin", "--state-dir", state, vault], input: password + "\n").standardOutput
        #expect(titles.contains("From phone") && titles.contains("From laptop"))
    }

    @Test("a copy that carries nothing new is retired and the vault left byte for byte, mtime and inode as they were")
    func nothingNew() throws {
        let directory = try CLIFixtures.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let vault = directory.appendingPathComponent("pw.kdbx").path
        let state = directory.appendingPathComponent("state").path
        let input = CLIFixtures.kdbx31Password + "\n"
        try FileManager.default.copyItem(atPath: CLIFixtures.kdbx31, toPath: vault)
        #expect(try ToolRunner.run(["add", "--password-stdin", "--state-dir", state, vault, "/Added"], input: input).status == 0)
        // An older version of the vault and an exact copy: neither carries anything new.
        let older = directory.appendingPathComponent("pw.sync-conflict-20261130-120000-ABCDEFG.kdbx").path
        let same = directory.appendingPathComponent("pw (conflicted copy 2026-11-30 120001).kdbx").path
        try FileManager.default.copyItem(atPath: CLIFixtures.kdbx31, toPath: older)
        try FileManager.default.copyItem(atPath: vault, toPath: same)
        let before = try FileIdentity(vault)
        let merged = try ToolRunner.run(["conflicts", "--merge", "--json", "--password-stdin", "--state-dir", state, vault], input: input)
        #expect(merged.status == 0, "\(merged.standardError)")
        #expect(try FileIdentity(vault) == before, "the vault was rewritten")
        let report = try JSONSerialization.jsonObject(with: Data(merged.standardOutput.utf8)) as? [String: Any]
        let first = (report?["vaults"] as? [[String: Any]])?.first
        #expect(first?["wroteVault"] as? Bool == false)
        #expect(((first?["outcomes"] as? [[String: Any]]) ?? []).compactMap { $0["result"] as? String } == ["nothingNew", "nothingNew"])
        #expect(!FileManager.default.fileExists(atPath: older) && !FileManager.default.fileExists(atPath: same))
        // The watcher reports the same as an event and leaves the vault alone too.
        try FileManager.default.copyItem(atPath: vault, toPath: older)
        let watch = try ToolRunner.run(["watch", "--once", "--json", "--password-stdin", "--state-dir", state, vault], input: input)
        #expect(watch.standardOutput.contains("\"conflictCopyRetired\""), "\(watch.standardOutput)")
        #expect(!watch.standardOutput.contains("\"conflictCopyMerged\""))
        #expect(try FileIdentity(vault) == before, "the watcher rewrote the vault")
        #expect(!FileManager.default.fileExists(atPath: older))
    }
}

@Suite("KDF salt rotation from the command line")
struct SaltRotationCLITests {
    @Test("add draws a new KDF salt; {\"rotateKDFSalt\": false} in the device settings keeps it")
    func rotation() throws {
        let directory = try CLIFixtures.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let vault = directory.appendingPathComponent("pw.kdbx").path
        try FileManager.default.copyItem(atPath: CLIFixtures.kdbx31, toPath: vault)
        func salt() throws -> Data { try KDBXReader.header(of: Data(contentsOf: URL(fileURLWithPath: vault))).kdf.salt }
        let input = CLIFixtures.kdbx31Password + "\n"
        let config = directory.appendingPathComponent("config")
        let original = try salt()
        #expect(try ToolRunner.run(["add", "--password-stdin", vault, "/Rotated"], input: input,
                                   environment: ["XDG_CONFIG_HOME": config.path]).status == 0)
        let rotated = try salt()
        #expect(rotated != original)
        try FileManager.default.createDirectory(at: config.appendingPathComponent("mypass-sync"), withIntermediateDirectories: true)
        try Data(#"{"rotateKDFSalt": false}"#.utf8).write(to: config.appendingPathComponent("mypass-sync/config.json"))
        #expect(try ToolRunner.run(["add", "--password-stdin", vault, "/Kept"], input: input,
                                   environment: ["XDG_CONFIG_HOME": config.path]).status == 0)
        #expect(try salt() == rotated)
    }
}

/// What tells a file rewritten from one left alone: content, inode and modification time.
struct FileIdentity: Equatable {
    let bytes: Data
    let inode: UInt64
    let modified: Int

    init(_ path: String) throws {
        bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        var info = stat()
        guard stat(path, &info) == 0 else { throw CocoaError(.fileNoSuchFile) }
        inode = UInt64(info.st_ino)
        modified = info.st_mtim.tv_sec * 1_000_000_000 + info.st_mtim.tv_nsec
    }
}

import Foundation
import KDBXFormat
import MyPassCore
import MyPassCrypto
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Whoever else can write into a synced folder controls its names, symlinks, file types, sizes and
/// permission bits. Each test plants something there (no password needed) and checks that the tool
/// never reaches outside the folder, blocks, leaks or takes in a planted file.
@Suite("the synced folder is hostile: planted files never reach outside it", .serialized)
struct HostileFolderTests {
    let input = CLIFixtures.kdbx31Password + "\n"

    /// A scratch folder holding `pw.kdbx` (the fixture, 0600) and a state directory beside it.
    private func folder() throws -> (root: URL, vault: String, state: String) {
        let root = try CLIFixtures.scratch()
        let synced = root.appendingPathComponent("synced")
        try FileManager.default.createDirectory(at: synced, withIntermediateDirectories: true)
        let vault = synced.appendingPathComponent("pw.kdbx").path
        try FileManager.default.copyItem(atPath: CLIFixtures.kdbx31, toPath: vault)
        chmod(vault, 0o600)
        return (root, vault, root.appendingPathComponent("state").path)
    }

    private func mode(_ path: String) -> mode_t {
        var info = stat()
        lstat(path, &info)
        return info.st_mode & 0o7777
    }

    private func isSymlink(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFLNK
    }

    /// Runs mypass-sync with a 10 s limit: a planted FIFO must not block it.
    private func runBounded(_ arguments: [String]) throws -> ProcessRunner.Outcome {
        try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/timeout"), ["10", try ToolRunner.binary().path] + arguments,
                              input: Data(input.utf8), environment: ["XDG_STATE_HOME": ToolRunner.stateHome])
    }

    @Test("a .bak, a merge -o and a convert -o that are symlinks are replaced as links; their targets are untouched")
    func symlinkedOutputs() throws {
        let (root, vault, state) = try folder()
        defer { try? FileManager.default.removeItem(at: root) }
        let victim = root.appendingPathComponent("bashrc").path
        try Data("precious\n".utf8).write(to: URL(fileURLWithPath: victim))
        #expect(symlink(victim, vault + ".bak") == 0)
        let added = try ToolRunner.run(["add", "--backup", "--password-stdin", "--state-dir", state, vault, "/Planted backup"], input: input)
        #expect(added.status == 0, "\(added.standardError)")
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious\n", "the backup was written through the symlink")
        #expect(!isSymlink(vault + ".bak") && mode(vault + ".bak") == 0o600)
        for arguments in [["merge", "--password-stdin", "--state-dir", state, vault, CLIFixtures.kdbx31, "-o"],
                          ["convert", "--password-stdin", vault, "-o"]] {
            let out = root.appendingPathComponent("synced/out.kdbx").path
            try? FileManager.default.removeItem(atPath: out)
            #expect(symlink(victim, out) == 0)
            let result = try ToolRunner.run(arguments + [out], input: input)
            #expect(result.status == 0, "\(arguments[0]): \(result.standardError)")
            #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious\n", "\(arguments[0]) -o wrote through the symlink")
            #expect(!isSymlink(out) && mode(out) == 0o600)
        }
    }

    @Test("merge -o, convert -o and attachment-export onto a FIFO or a device node: refused (exit 7), the node left as it was")
    func specialFileOutputs() throws {
        let (root, vault, state) = try folder()
        defer { try? FileManager.default.removeItem(at: root) }
        let fifo = root.appendingPathComponent("out.fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        var outputs = [fifo]
        // A character device like /dev/null, made in the scratch folder (needs root, as in CI).
        let node = root.appendingPathComponent("null").path
        if getuid() == 0 {
            #expect(mknod(node, S_IFCHR | 0o666, dev_t(1 << 8 | 3)) == 0)  // makedev(1, 3), as /dev/null
            outputs.append(node)
        }
        for out in outputs {
            let kind = { (path: String) -> mode_t in
                var status = stat()
                return lstat(path, &status) == 0 ? status.st_mode & S_IFMT : 0
            }
            let before = kind(out)
            for arguments in [["merge", "--password-stdin", "--state-dir", state, vault, CLIFixtures.kdbx31, "-o", out],
                              ["convert", "--password-stdin", vault, "-o", out],
                              ["attachment-export", "--password-stdin", "--state-dir", state, vault, "/Internet/GitHub", "recovery.txt", out]] {
                let result = try runBounded(arguments)
                #expect(result.status == 7, "\(arguments[0]) onto \(out): \(result.standardError)")
                #expect(result.standardError.contains("not a regular file"), "\(arguments[0]): \(result.standardError)")
                #expect(kind(out) == before, "\(arguments[0]) replaced \(out)")
            }
        }
    }

    @Test("a copy that is a symlink to a private vault of the same database is not merged")
    func symlinkedCopy() throws {
        let (root, vault, state) = try folder()
        defer { try? FileManager.default.removeItem(at: root) }
        let privateVault = root.appendingPathComponent("private.kdbx").path
        try FileManager.default.copyItem(atPath: vault, toPath: privateVault)
        #expect(try ToolRunner.run(["add", "--password-stdin", "--state-dir", root.appendingPathComponent("p").path, privateVault, "/Private"],
                                   input: input).status == 0)
        let copy = (vault as NSString).deletingLastPathComponent + "/pw.sync-conflict-20261130-101010-EVILEVI.kdbx"
        #expect(symlink(privateVault, copy) == 0)
        let watch = try runBounded(["watch", "--once", "--json", "--password-stdin", "--state-dir", state, vault])
        #expect(watch.status == 0)
        #expect(watch.output.contains("unreadable"), "\(watch.output)")
        let titles = try ToolRunner.run(["ls", "--password-stdin", "--state-dir", state, vault], input: input).standardOutput
        #expect(!titles.contains("Private"))
        #expect(isSymlink(copy), "the planted link was moved or replaced")
    }

    @Test("FIFOs named like a copy or like the vault are refused at once, never waited on")
    func fifos() throws {
        let (root, vault, state) = try folder()
        defer { try? FileManager.default.removeItem(at: root) }
        let copy = (vault as NSString).deletingLastPathComponent + "/pw.sync-conflict-20261130-101010-FIFOFIF.kdbx"
        #expect(mkfifo(copy, 0o600) == 0)
        for arguments in [["conflicts", "--merge", "--password-stdin", "--state-dir", state, vault],
                          ["watch", "--once", "--password-stdin", "--state-dir", state, vault]] {
            let result = try runBounded(arguments)
            #expect(result.status != 124, "\(arguments[0]) blocked on the FIFO")
            #expect(result.status == 0, "\(arguments[0]): \(result.standardError)")
        }
        unlink(copy)
        #expect(unlink(vault) == 0 && mkfifo(vault, 0o600) == 0)
        for arguments in [["status", "--state-dir", state, vault], ["info", vault], ["ls", "--password-stdin", vault],
                          ["watch", "--once", "--password-stdin", "--state-dir", state, vault]] {
            let result = try runBounded(arguments)
            #expect(result.status != 124, "\(arguments[0]) blocked on the FIFO vault")
            #expect(result.status == 7, "\(arguments[0]): exit \(result.status) \(result.standardError)")
        }
    }

    @Test("a rolled-back vault with junk under a copy's name beside it is still refused")
    func rollbackWithJunkCopy() throws {
        let (root, vault, state) = try folder()
        defer { try? FileManager.default.removeItem(at: root) }
        let older = try Data(contentsOf: URL(fileURLWithPath: vault))
        #expect(try ToolRunner.run(["edit", "--password-stdin", "--state-dir", state, vault, "/Internet/GitHub", "-u", "newer"], input: input).status == 0)
        try older.write(to: URL(fileURLWithPath: vault))
        try Data("junk".utf8).write(to: URL(fileURLWithPath: (vault as NSString).deletingLastPathComponent + "/pw.sync-conflict-20261130-101010-JUNKJUN.kdbx"))
        let watch = try runBounded(["watch", "--once", "--json", "--password-stdin", "--state-dir", state, vault])
        #expect(watch.output.contains("\"refused\""), "\(watch.output)")
        #expect(!watch.output.contains("\"reloaded\""))
    }

    @Test("modes: a vault planted 0666 is saved 0600, a planted .bak 0666 is replaced 0600")
    func modes() throws {
        let (root, vault, state) = try folder()
        defer { try? FileManager.default.removeItem(at: root) }
        chmod(vault, 0o666)
        FileManager.default.createFile(atPath: vault + ".bak", contents: Data())
        chmod(vault + ".bak", 0o666)
        #expect(try ToolRunner.run(["add", "--backup", "--password-stdin", "--state-dir", state, vault, "/Mode"], input: input).status == 0)
        #expect(mode(vault) == 0o600 && mode(vault + ".bak") == 0o600, "\(String(mode(vault), radix: 8)) \(String(mode(vault + ".bak"), radix: 8))")
    }

    @Test("terminal escapes in planted file names and in titles are shown escaped in human output")
    func terminalEscapes() throws {
        let (root, vault, state) = try folder()
        defer { try? FileManager.default.removeItem(at: root) }
        let name = "pw.sync-conflict-20261130-101010-AAAAAAA\u{1b}]0;owned\u{07}\u{1b}[2J\nfake line\u{9b}.kdbx"
        FileManager.default.createFile(atPath: (vault as NSString).deletingLastPathComponent + "/" + name, contents: Data("junk".utf8))
        #expect(try ToolRunner.run(["add", "--password-stdin", "--state-dir", state, vault, "/Evil\u{9b}2J title\u{85}\nfake line"], input: input).status == 0)
        for arguments in [["status", "--state-dir", state, vault], ["conflicts", "--merge", "--password-stdin", "--state-dir", state, vault],
                          ["ls", "--password-stdin", vault], ["search", "--password-stdin", vault, "Evil"],
                          ["watch", "--once", "--password-stdin", "--state-dir", state, vault]] {
            let result = try ToolRunner.run(arguments, input: input)
            let text = result.standardOutput + result.standardError
            #expect(!text.unicodeScalars.contains { $0.value == 0x1b || $0.value == 0x07 || (0x80...0x9f).contains($0.value) },
                    "\(arguments[0]) printed a raw control character")
            #expect(!text.contains("\nfake line"), "\(arguments[0]) printed a planted newline")
        }
    }

    @Test("a huge sparse file named like a copy is not read")
    func hugeCopy() throws {
        let (root, vault, state) = try folder()
        defer { try? FileManager.default.removeItem(at: root) }
        let copy = (vault as NSString).deletingLastPathComponent + "/pw.sync-conflict-20261130-101010-HUGEHUG.kdbx"
        #expect(FileManager.default.createFile(atPath: copy, contents: Data()))
        #expect(truncate(copy, 3 << 30) == 0)
        let started = Date()
        let watch = try runBounded(["watch", "--once", "--json", "--password-stdin", "--state-dir", state, vault])
        #expect(Date().timeIntervalSince(started) < 5)
        #expect(watch.output.contains("tooLarge"), "\(watch.output)")
        #expect(FileManager.default.fileExists(atPath: copy))
    }

    @Test("a vault with other credentials planted in the folder does not stop conflicts FOLDER --merge")
    func plantedVaultInFolder() throws {
        let (root, vault, state) = try folder()
        defer { try? FileManager.default.removeItem(at: root) }
        let folderPath = (vault as NSString).deletingLastPathComponent
        try FileManager.default.copyItem(atPath: CLIFixtures.kdbx4, toPath: folderPath + "/a.kdbx")
        FileManager.default.createFile(atPath: folderPath + "/a.sync-conflict-20261130-101010-AAAAAAA.kdbx", contents: Data("x".utf8))
        let copy = folderPath + "/pw.sync-conflict-20261130-101010-PHONEPH.kdbx"
        try FileManager.default.copyItem(atPath: vault, toPath: copy)
        #expect(try ToolRunner.run(["add", "--password-stdin", "--state-dir", root.appendingPathComponent("o").path, copy, "/From the copy"],
                                   input: input).status == 0)
        let result = try ToolRunner.run(["conflicts", "--merge", "--password-stdin", "--state-dir", state, folderPath], input: input)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput.contains("skipped"), "\(result.standardOutput)")
        let titles = try ToolRunner.run(["ls", "--password-stdin", "--state-dir", state, vault], input: input).standardOutput
        #expect(titles.contains("From the copy"))
    }

    @Test("a vault in the folder that is a symlink to a private vault is never merged into (conflicts FOLDER --merge)")
    func symlinkedVaultInFolder() throws {
        let (root, vault, state) = try folder()
        defer { try? FileManager.default.removeItem(at: root) }
        let folderPath = (vault as NSString).deletingLastPathComponent
        let privateVault = root.appendingPathComponent("private.kdbx").path
        try FileManager.default.copyItem(atPath: vault, toPath: privateVault)
        let privateBytes = try Data(contentsOf: URL(fileURLWithPath: privateVault))
        #expect(symlink(privateVault, folderPath + "/evil.kdbx") == 0)
        // A copy of "evil.kdbx" carrying the planter's entry, which a merge would write into the private vault.
        let copy = folderPath + "/evil.sync-conflict-20261130-101010-EVILEVI.kdbx"
        try FileManager.default.copyItem(atPath: vault, toPath: copy)
        #expect(try ToolRunner.run(["add", "--password-stdin", "--state-dir", root.appendingPathComponent("o").path, copy, "/Planted"],
                                   input: input).status == 0)
        let result = try ToolRunner.run(["conflicts", "--merge", "--json", "--password-stdin", "--state-dir", state, folderPath], input: input)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput.contains("notARegularFile"), "\(result.standardOutput)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: privateVault)) == privateBytes, "the private vault behind the link was written")
        #expect(isSymlink(folderPath + "/evil.kdbx") && FileManager.default.fileExists(atPath: copy))
    }

    @Test("a crash prints no backtrace with registers or memory (the journal would keep it)")
    func crashPrintsNoMemory() throws {
        let (root, vault, state) = try folder()
        defer { try? FileManager.default.removeItem(at: root) }
        let process = Process()
        process.executableURL = try ToolRunner.binary()
        process.arguments = ["watch", "--password-stdin", "--state-dir", state, vault]
        let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        let printed = OutputCollector(stdout.fileHandleForReading)
        try process.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        // The first check printed its event: the vault is open, its key is in memory.
        waitUntil("the watcher's first event") { !printed.text.isEmpty }
        kill(process.processIdentifier, SIGSEGV)
        process.waitUntilExit()
        let text = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGSEGV)
        #expect(!text.contains("Registers") && !text.contains("Backtracing") && !text.contains("crashed"), "\(text.prefix(300))")
    }

    @Test("a copy with a KDF far costlier than the vault's (Argon2 2 GiB x 10,000: hours, within the caps) is refused before any derivation")
    func costlyCopy() throws {
        let root = try CLIFixtures.scratch()
        defer { try? FileManager.default.removeItem(at: root) }
        let vault = root.appendingPathComponent("pw.kdbx").path
        try FileManager.default.copyItem(atPath: CLIFixtures.kdbx4, toPath: vault)
        let copy = root.appendingPathComponent("pw.sync-conflict-20261130-101010-COSTLYC.kdbx").path
        try KDFBomb.made(from: Data(contentsOf: URL(fileURLWithPath: vault))).write(to: URL(fileURLWithPath: copy))
        let started = Date()
        let watch = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/timeout"),
                                          ["20", try ToolRunner.binary().path, "watch", "--once", "--json", "--password-stdin",
                                           "--state-dir", root.appendingPathComponent("state").path, vault],
                                          input: Data((CLIFixtures.kdbx4Password + "\n").utf8))
        #expect(Date().timeIntervalSince(started) < 10, "derived for the planted copy")
        #expect(watch.output.contains("tooCostly"), "\(watch.output)")
        #expect(FileManager.default.fileExists(atPath: copy))
    }

    @Test("merge inputs from elsewhere (Unison's CURRENT2, git's %B and %O, a --base) are held to the same budget: a KDF bomb is refused before any derivation")
    func costlyMergeInputs() throws {
        let root = try CLIFixtures.scratch()
        defer { try? FileManager.default.removeItem(at: root) }
        let vault = root.appendingPathComponent("pw.kdbx").path
        try FileManager.default.copyItem(atPath: CLIFixtures.kdbx4, toPath: vault)
        let bomb = root.appendingPathComponent("other.kdbx").path
        try KDFBomb.made(from: Data(contentsOf: URL(fileURLWithPath: vault))).write(to: URL(fileURLWithPath: bomb))
        let before = try Data(contentsOf: URL(fileURLWithPath: vault))
        for arguments in [["merge", vault, bomb], ["merge", vault, vault, "--base", bomb], ["git", "merge-driver", "--", bomb, vault, vault]] {
            let started = Date()
            let options = ["--password-stdin"] + (arguments[0] == "git" ? [] : ["--state-dir", root.appendingPathComponent("state").path])
            let outcome = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/timeout"),
                                                ["20", try ToolRunner.binary().path] + Array(arguments.prefix(2)) + options + arguments.dropFirst(2),
                                                input: Data((CLIFixtures.kdbx4Password + "\n").utf8))
            #expect(Date().timeIntervalSince(started) < 10, "\(arguments[0]): derived for the bomb")
            #expect(outcome.status == (arguments[0] == "git" ? 1 : 6), "\(arguments): \(outcome.standardError)")
            #expect(outcome.standardError.contains("exceed"), "\(arguments): \(outcome.standardError)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: vault)) == before)
    }

    @Test("a planted merged-conflicts (a symlink out of the folder, or a regular file) is never used: copies go to the state directory, the vault is written once")
    func plantedMergedConflicts() throws {
        for planted in ["symlink", "file"] {
            let (root, vault, state) = try folder()
            defer { try? FileManager.default.removeItem(at: root) }
            let synced = (vault as NSString).deletingLastPathComponent
            let outside = root.appendingPathComponent("outside").path
            try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
            if planted == "symlink" {
                #expect(symlink(outside, synced + "/merged-conflicts") == 0)
            } else {
                FileManager.default.createFile(atPath: synced + "/merged-conflicts", contents: Data("x".utf8))
            }
            let copy = synced + "/pw.sync-conflict-20261130-101010-PHONEPH.kdbx"
            try FileManager.default.copyItem(atPath: vault, toPath: copy)
            #expect(try ToolRunner.run(["add", "--password-stdin", "--state-dir", root.appendingPathComponent("o").path, copy, "/From the copy"],
                                       input: input).status == 0)
            let first = try runBounded(["watch", "--once", "--json", "--password-stdin", "--state-dir", state, vault])
            #expect(first.output.contains("conflictCopyMerged"), "\(planted): \(first.output)")
            let after = try FileIdentity(vault)
            let second = try runBounded(["watch", "--once", "--json", "--password-stdin", "--state-dir", state, vault])
            #expect(second.status == 0)
            #expect(try FileIdentity(vault) == after, "\(planted): the vault was written again")
            #expect(try FileManager.default.contentsOfDirectory(atPath: outside).isEmpty, "\(planted): something was moved out of the folder")
            #expect(!FileManager.default.fileExists(atPath: copy))
        }
    }
}

import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A `mypass-sync watch --json` process on a vault in its own folder, driven by real file operations.
private final class WatchProcess {
    let directory: URL
    let vault: String
    private let process = Process()
    private let output = Pipe()
    private let received: OutputCollector
    static let password = CLIFixtures.kdbx31Password

    init(extraArguments: [String] = [], environment: [String: String] = [:]) throws {
        directory = try CLIFixtures.scratch()
        let folder = directory.appendingPathComponent("sync")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        vault = folder.appendingPathComponent("pw.kdbx").path
        try FileManager.default.copyItem(atPath: CLIFixtures.kdbx31, toPath: vault)
        process.executableURL = try ToolRunner.binary()
        process.arguments = ["watch", "--json", "--password-stdin", "--state-dir", directory.appendingPathComponent("state").path, vault] + extraArguments
        let input = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        received = OutputCollector(output.fileHandleForReading)
        try process.run()
        input.fileHandleForWriting.write(Data((Self.password + "\n").utf8))
        try input.fileHandleForWriting.close()
        // The watches are set before the first check, which records the base.
        waitFor(kind: "baseRecorded")
    }

    /// The events printed so far.
    var events: [[String: Any]] { parsedEvents(received.text) }

    /// Waits until the events so far satisfy `condition` (a test issue after `timeout` seconds).
    @discardableResult
    func waitFor(_ what: String, timeout: Double = 30, sourceLocation: SourceLocation = #_sourceLocation,
                 _ condition: ([[String: Any]]) -> Bool) -> Bool {
        waitUntil(what, timeout: timeout, sourceLocation: sourceLocation) { condition(events) }
    }

    /// Waits until `count` events of `kind` were printed.
    @discardableResult
    func waitFor(kind: String, count: Int = 1, timeout: Double = 30, sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        waitFor("\(count) \(kind) event(s)", timeout: timeout, sourceLocation: sourceLocation) {
            kinds($0).filter { $0 == kind }.count >= count
        }
    }

    /// The watcher's resource limits as the kernel reports them.
    var limits: String { (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/limits", encoding: .utf8)) ?? "" }

    /// Freezes (SIGSTOP) or resumes (SIGCONT) the watcher: while frozen it reads no inotify events.
    func freeze(_ frozen: Bool) { kill(process.processIdentifier, frozen ? SIGSTOP : SIGCONT) }

    /// A copy of the vault edited with keepassxc-cli (`arguments` after the file name).
    func editedCopy(_ arguments: [String], name: String = "scratch.kdbx") throws -> String {
        let copy = directory.appendingPathComponent(name).path
        try? FileManager.default.removeItem(atPath: copy)
        try FileManager.default.copyItem(atPath: vault, toPath: copy)
        let result = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), ["keepassxc-cli"] + [arguments[0], "-q", copy] + arguments.dropFirst(),
                                           input: Data((Self.password + "\n").utf8), environment: ["QT_QPA_PLATFORM": "offscreen"])
        #expect(result.status == 0, "\(result.standardError)")
        return copy
    }

    /// Stops the watcher with SIGINT and returns its events (the caller waited for those it expects).
    func stop() -> [[String: Any]] {
        kill(process.processIdentifier, SIGINT)
        process.waitUntilExit()
        let data = received.all()
        try? FileManager.default.removeItem(at: directory)
        return parsedEvents(String(decoding: data, as: UTF8.self))
    }
}

/// The JSON lines of `text` (a line still being written is left out).
private func parsedEvents(_ text: String) -> [[String: Any]] {
    text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
}

private func kinds(_ events: [[String: Any]]) -> [String] { events.compactMap { $0["kind"] as? String } }

private func addedTitles(_ events: [[String: Any]], kind: String) -> [String] {
    events.filter { $0["kind"] as? String == kind }.flatMap { ($0["changes"] as? [[String: Any]] ?? []).compactMap { $0["title"] as? String } }
}

@Suite("watch with real inotify (end to end)", .serialized)
struct WatchCommandTests {
    @Test("an atomic replace by rename (Syncthing style) is taken in; a clean stop on SIGINT")
    func atomicReplace() throws {
        let watch = try WatchProcess()
        let copy = try watch.editedCopy(["add", "Renamed in"])
        #expect(rename(copy, watch.vault) == 0)
        watch.waitFor(kind: "reloaded")
        let events = watch.stop()
        #expect(kinds(events).first == "baseRecorded")
        #expect(addedTitles(events, kind: "reloaded") == ["Renamed in"])
        #expect(kinds(events).last == "stopped")
    }

    @Test("an in-place rewrite (truncate and write) is taken in once the file parses")
    func inPlaceWrite() throws {
        let watch = try WatchProcess()
        let copy = try watch.editedCopy(["add", "Written in place"])
        let bytes = try Data(contentsOf: URL(fileURLWithPath: copy))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: watch.vault))
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: bytes.prefix(bytes.count / 2))
        // Kept: the half-written file must be seen (and not taken), and the watcher reports nothing
        // for a file that does not parse yet: the writer pauses as a slow writer would.
        usleep(400_000)
        try handle.write(contentsOf: bytes.dropFirst(bytes.count / 2))
        try handle.close()
        watch.waitFor(kind: "reloaded")
        let events = watch.stop()
        #expect(addedTitles(events, kind: "reloaded") == ["Written in place"])
    }

    @Test("a Syncthing conflict copy is merged and moved aside; our own write is not reported as a change")
    func conflictCopy() throws {
        let watch = try WatchProcess(extraArguments: ["--copy-grace", "0"])
        let copy = try watch.editedCopy(["add", "From the conflict"])
        let conflictName = (watch.vault as NSString).deletingLastPathComponent + "/pw.sync-conflict-20261129-121212-PHONE.kdbx"
        #expect(rename(copy, conflictName) == 0)
        let directory = (watch.vault as NSString).deletingLastPathComponent
        watch.waitFor(kind: "conflictCopyMerged")
        watch.waitFor(kind: "ownWriteIgnored")  // the merged vault's own write came back as an event
        let events = watch.stop()
        #expect(addedTitles(events, kind: "conflictCopyMerged") == ["From the conflict"])
        #expect(!kinds(events).contains("reloaded"), "our own save was taken for an external change: \(kinds(events))")
        // The event carries the merge's explanation: the entry only the copy had, added by its rule.
        let explanation = events.first { $0["kind"] as? String == "conflictCopyMerged" }?["explanation"] as? [[String: Any]] ?? []
        #expect(explanation.contains { $0["field"] as? String == "Object" && $0["rule"] as? String == "onlyOneSideHasIt"
            && $0["result"] as? String == "remote" && ($0["path"] as? String ?? "").hasSuffix("From the conflict") }, "\(explanation)")
        _ = directory
    }

    @Test("while Syncthing is still transferring the vault the watcher waits; then it takes the new vault and merges the copy into it")
    func waitsForTransfer() throws {
        let watch = try WatchProcess(extraArguments: ["--copy-grace", "0"])
        let folder = (watch.vault as NSString).deletingLastPathComponent
        let incoming = try watch.editedCopy(["add", "From the transfer"], name: "incoming.kdbx")
        let copy = try watch.editedCopy(["add", "From the conflict"], name: "conflict.kdbx")
        // Syncthing writes the incoming vault under its temporary name while a copy is already there.
        let temporary = folder + "/.syncthing.pw.kdbx.tmp"
        try FileManager.default.copyItem(atPath: incoming, toPath: temporary)
        #expect(rename(copy, folder + "/pw.sync-conflict-20261130-101010-PHONE.kdbx") == 0)
        for _ in 0..<8 {  // still being written: its modification time moves
            usleep(250_000)  // Kept: the pace of a transfer in progress (2 s of writes), what the watcher must wait out.
            #expect(utimes(temporary, nil) == 0)
        }
        #expect(FileManager.default.fileExists(atPath: folder + "/pw.sync-conflict-20261130-101010-PHONE.kdbx"), "merged during the transfer")
        #expect(rename(temporary, watch.vault) == 0)
        watch.waitFor(kind: "conflictCopyMerged")
        let final = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), ["keepassxc-cli", "ls", "-q", watch.vault],
                                          input: Data((WatchProcess.password + "\n").utf8), environment: ["QT_QPA_PLATFORM": "offscreen"])
        let events = watch.stop()
        #expect(kinds(events).contains("waitingForSync"), "\(kinds(events))")
        #expect(addedTitles(events, kind: "conflictCopyMerged") == ["From the conflict"])
        #expect(final.output.contains("From the transfer") && final.output.contains("From the conflict"), "\(final.output)")
    }

    @Test("a copy made on another device is left to that device for the grace: its merged vault arrives, nothing is written here; a copy left longer is merged")
    func foreignCopyGrace() throws {
        let watch = try WatchProcess(extraArguments: ["--copy-grace", "3"])
        let folder = (watch.vault as NSString).deletingLastPathComponent
        let copyPath = folder + "/pw.sync-conflict-20261130-101010-PHONE.kdbx"
        // The other device's version, shipped here as a new file (a new inode, not this vault's).
        let copy = try watch.editedCopy(["add", "From elsewhere"], name: "copy.kdbx")
        #expect(rename(copy, copyPath) == 0)
        // Kept: a copy in its grace gives no event; the watcher is given a check (after its debounce)
        // with the copy present before that device's merged vault arrives.
        usleep(1_500_000)
        #expect(FileManager.default.fileExists(atPath: copyPath), "merged at once although another device made it")
        // That device merged it: its vault (with the copy's entry) arrives, the copy's deletion follows.
        let merged = try watch.editedCopy(["add", "From elsewhere"], name: "merged.kdbx")
        #expect(rename(merged, watch.vault) == 0)
        #expect(unlink(copyPath) == 0)
        watch.waitFor(kind: "reloaded")
        // A copy whose device never merges it (no watcher there) is merged here after the grace: not
        // before 3 s from its arrival (the watcher sees it no earlier), and within the grace and a check.
        let late = try watch.editedCopy(["add", "Left alone"], name: "late.kdbx")
        let lateArrived = Date()
        #expect(rename(late, copyPath) == 0)
        let mergedAfterGrace = pollUntil(timeout: 20, interval: 0.05) { !FileManager.default.fileExists(atPath: copyPath) }
        let waited = Date().timeIntervalSince(lateArrived)
        #expect(waited >= 2.95, "merged \(waited) s after it arrived, within the grace of 3 s")
        watch.waitFor(kind: "conflictCopyMerged")
        watch.waitFor(kind: "ownWriteIgnored")
        let events = watch.stop()
        #expect(mergedAfterGrace, "not merged after the grace: \(events.map { "\($0["kind"] ?? "") \($0["detail"] ?? "")" })")
        #expect(addedTitles(events, kind: "reloaded") == ["From elsewhere"])
        #expect(addedTitles(events, kind: "conflictCopyMerged") == ["Left alone"], "\(kinds(events))")
        #expect(kinds(events).filter { $0 == "ownWriteIgnored" }.count == 1, "\(kinds(events))")
    }

    @Test("a program that saves over a version it had not read drops an entry: the watcher puts it back")
    func restoresBlindOverwrite() throws {
        let watch = try WatchProcess()
        let stale = try watch.editedCopy(["add", "Blind save"], name: "stale.kdbx")  // made from the version before "Synced here"
        let synced = try watch.editedCopy(["add", "Synced here"], name: "synced.kdbx")
        #expect(rename(synced, watch.vault) == 0)
        watch.waitFor(kind: "reloaded")
        #expect(rename(stale, watch.vault) == 0)  // "Synced here" is gone, with no deletion recorded
        watch.waitFor(kind: "restored")
        let final = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), ["keepassxc-cli", "ls", "-q", watch.vault],
                                          input: Data((WatchProcess.password + "\n").utf8), environment: ["QT_QPA_PLATFORM": "offscreen"])
        let events = watch.stop()
        #expect(kinds(events).contains("restored"), "\(kinds(events))")
        #expect(final.output.contains("Synced here") && final.output.contains("Blind save"), "\(final.output)")
        #expect(kinds(events).filter { $0 == "restored" }.count == 1, "restored more than once: \(kinds(events))")
    }

    @Test("a vault deleted and recreated is waited for, not treated as empty")
    func deleteAndRecreate() throws {
        let watch = try WatchProcess()
        let copy = try watch.editedCopy(["add", "After recreate"])
        #expect(unlink(watch.vault) == 0)
        watch.waitFor(kind: "vaultMissing")
        #expect(rename(copy, watch.vault) == 0)
        watch.waitFor(kind: "reloaded")
        let events = watch.stop()
        let order = kinds(events)
        #expect(order.contains("vaultMissing"))
        #expect(order.contains("vaultBack"))
        #expect(addedTitles(events, kind: "reloaded") == ["After recreate"])
    }

    @Test("a rollback to an older version is reported and not taken; --once exits 6 (refused)")
    func rollback() throws {
        let watch = try WatchProcess()
        let older = try Data(contentsOf: URL(fileURLWithPath: watch.vault))
        let newer = try watch.editedCopy(["edit", "-u", "newer-user", "Internet/GitHub"])
        #expect(rename(newer, watch.vault) == 0)
        watch.waitFor(kind: "reloaded")
        let rollbackCopy = watch.directory.appendingPathComponent("old.kdbx").path
        try older.write(to: URL(fileURLWithPath: rollbackCopy))
        #expect(rename(rollbackCopy, watch.vault) == 0)
        // The watcher holds it, waiting for a conflict copy with the newer versions; --once decides at once.
        let once = try ToolRunner.run(["watch", "--once", "--json", "--password-stdin", "--state-dir",
                                       watch.directory.appendingPathComponent("state").path, watch.vault], input: WatchProcess.password + "\n")
        watch.waitFor(kind: "waitingForCopy")
        let events = watch.stop()
        #expect(kinds(events).filter { $0 == "reloaded" }.count == 1)
        #expect(events.contains { $0["kind"] as? String == "waitingForCopy" && ($0["detail"] as? String ?? "").contains("older version") },
                "\(kinds(events))")
        #expect(once.standardOutput.contains("\"refused\"") && once.standardOutput.contains("older version"), "\(once.standardOutput)")
        #expect(once.status == 6, "--once exits with the refusal's status")
    }

    @Test("resolve without a working copy answers what watch refused: --merge puts this device's newer value back into a rollback, --reload takes it as it is (this device's kept aside), another database is never merged and --overwrite puts this device's back")
    func resolveRefusedVersion() throws {
        let directory = try CLIFixtures.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let folder = directory.appendingPathComponent("sync")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let vault = folder.appendingPathComponent("pw.kdbx").path
        try FileManager.default.copyItem(atPath: CLIFixtures.kdbx31, toPath: vault)
        let state = directory.appendingPathComponent("state").path
        func tool(_ arguments: [String], password: Bool = true) throws -> ToolRunner.Outcome {
            try ToolRunner.run(arguments + (password ? ["--password-stdin"] : []) + ["--state-dir", state], input: WatchProcess.password + "\n")
        }
        func once() throws -> Int32 { try tool(["watch", "--once", "--json", vault]).status }
        func keepassxc(_ arguments: [String]) throws -> ProcessRunner.Outcome {
            try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), ["keepassxc-cli"] + arguments,
                                  input: Data((WatchProcess.password + "\n").utf8), environment: ["QT_QPA_PLATFORM": "offscreen"])
        }
        func userName() throws -> String { try keepassxc(["show", "-q", "-a", "UserName", vault, "Internet/GitHub"]).output }
        /// A file put in the vault's place with one rename.
        func replaceVault(with bytes: Data) throws {
            let file = directory.appendingPathComponent("incoming-\(UUID().uuidString).kdbx")
            try bytes.write(to: file)
            #expect(rename(file.path, vault) == 0)
        }
        #expect(try once() == 0)
        let older = try Data(contentsOf: URL(fileURLWithPath: vault))
        let olderName = try userName()
        #expect(try keepassxc(["edit", "-q", "-u", "newer-user", vault, "Internet/GitHub"]).status == 0)
        #expect(try once() == 0)

        try replaceVault(with: older)
        #expect(try once() == 6, "the rollback is refused")
        let merged = try tool(["resolve", vault, "--merge", "--json"])
        #expect(merged.status == 0 && merged.standardOutput.contains("merged back") && merged.standardOutput.contains("\"wroteFile\" : true"),
                "\(merged.standardOutput)\(merged.standardError)")
        #expect(try userName().contains("newer-user"))
        #expect(try once() == 0, "nothing is refused any more")

        try replaceVault(with: older)
        #expect(try once() == 6)
        let reloaded = try tool(["resolve", vault, "--reload"])
        #expect(reloaded.status == 0 && reloaded.standardOutput.contains("taken as it is"), "\(reloaded.standardOutput)\(reloaded.standardError)")
        #expect(try once() == 0, "the rollback taken is not refused or restored again")
        #expect(try Data(contentsOf: URL(fileURLWithPath: vault)) == older && (try userName()) == olderName)
        let kept = try tool(["conflicts", vault, "--merged", "--json"], password: false)
        #expect(kept.standardOutput.contains("set aside"), "\(kept.standardOutput)\(kept.standardError)")

        let other = directory.appendingPathComponent("other.kdbx").path
        let created = try ToolRunner.run(["db-create", other, "--kdf", "aes-kdf", "--kdf-rounds", "1000", "--password-stdin"],
                                         input: WatchProcess.password + "\n")
        #expect(created.status == 0, "\(created.standardError)")
        try replaceVault(with: try Data(contentsOf: URL(fileURLWithPath: other)))
        #expect(try once() == 6)
        let notMerged = try tool(["resolve", vault, "--merge"])
        #expect(notMerged.status == 6 && notMerged.standardError.contains("different database"), "\(notMerged.standardError)")
        let overwritten = try tool(["resolve", vault, "--overwrite"])
        #expect(overwritten.status == 0, "\(overwritten.standardOutput)\(overwritten.standardError)")
        #expect(try userName() == olderName, "this device's version is not back")
        #expect(try once() == 0)
    }

    @Test("the folder moved away and back: the watch is re-established and the change taken in")
    func folderMovedAndBack() throws {
        let watch = try WatchProcess()
        let folder = (watch.vault as NSString).deletingLastPathComponent
        let away = watch.directory.appendingPathComponent("away").path
        let copy = try watch.editedCopy(["add", "While away"])
        #expect(rename(folder, away) == 0)
        watch.waitFor(kind: "vaultMissing")  // the folder's removal was seen and checked
        #expect(rename(copy, away + "/pw.kdbx") == 0)
        #expect(rename(away, folder) == 0)
        watch.waitFor(kind: "reloaded")
        let events = watch.stop()
        #expect(addedTitles(events, kind: "reloaded") == ["While away"], "\(kinds(events))")
    }

    @Test("a forced inotify queue overflow makes the watcher rescan and find a change whose event was dropped")
    func queueOverflow() throws {
        let watch = try WatchProcess()
        let copy = try watch.editedCopy(["add", "After the overflow"])
        let limit = Int((try? String(contentsOfFile: "/proc/sys/fs/inotify/max_queued_events", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 16_384
        let folder = (watch.vault as NSString).deletingLastPathComponent
        watch.freeze(true)
        // Each file gives a create, a close-write and a delete event: fill the kernel queue past its limit.
        for index in 0..<(limit / 3 + 500) {
            let path = folder + "/.flood-\(index).tmp"
            FileManager.default.createFile(atPath: path, contents: Data())
            unlink(path)
        }
        #expect(rename(copy, watch.vault) == 0)  // Its event is dropped: the queue is full.
        watch.freeze(false)
        watch.waitFor(kind: "reloaded")
        let events = watch.stop()
        #expect(kinds(events).contains("rescan"))
        #expect(addedTitles(events, kind: "reloaded") == ["After the overflow"])
    }

    @Test("when the inotify watch limit is reached the watcher says so and polls")
    func watchLimit() throws {
        let watch = try WatchProcess(environment: ["MYPASS_SYNC_FAULTS": "watch:1:ENOSPC"])
        let copy = try watch.editedCopy(["add", "Found by polling"])
        #expect(rename(copy, watch.vault) == 0)
        watch.waitFor(kind: "reloaded")  // found by the poll (every 2 s without inotify)
        let events = watch.stop()
        let polling = events.first { $0["kind"] as? String == "pollingOnly" }
        #expect((polling?["detail"] as? String ?? "").contains("watch limit"))
        #expect(addedTitles(events, kind: "reloaded") == ["Found by polling"])
    }

    @Test("the long-running watcher, which holds the key, cannot write a core dump")
    func noCoreDumps() throws {
        let watch = try WatchProcess()
        let coreLine = watch.limits.split(separator: "\n").first { $0.hasPrefix("Max core file size") }.map(String.init) ?? ""
        _ = watch.stop()
        let numbers = coreLine.split(separator: " ").filter { Int($0) != nil }
        #expect(numbers == ["0", "0"], "core limit: \(coreLine)")
    }

    @Test("--once handles what is pending and exits")
    func once() throws {
        let directory = try CLIFixtures.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let vault = directory.appendingPathComponent("pw.kdbx").path
        try FileManager.default.copyItem(atPath: CLIFixtures.kdbx31, toPath: vault)
        let state = directory.appendingPathComponent("state").path
        let result = try ToolRunner.run(["watch", "--once", "--password-stdin", "--state-dir", state, vault], input: WatchProcess.password + "\n")
        #expect(result.status == 0)
        #expect(result.standardOutput.contains("baseRecorded"))
    }
}

@Suite("watch by polling alone", .serialized)
struct WatchPollingTests {
    @Test("with --poll a change is found even when no inotify event names the file")
    func polling() throws {
        // Changing the file through a hard link in another folder modifies it without any event in the
        // watched folder: only the fingerprint poll can see it.
        let watch = try WatchProcessForPolling()
        let events = try watch.run()
        #expect(events.contains { $0["kind"] as? String == "reloaded" })
    }
}

/// A watcher with --poll 1 on a vault changed only through a hard link from another folder.
private struct WatchProcessForPolling {
    func run() throws -> [[String: Any]] {
        let directory = try CLIFixtures.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let folder = directory.appendingPathComponent("sync"), elsewhere = directory.appendingPathComponent("elsewhere")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        let vault = folder.appendingPathComponent("pw.kdbx").path
        try FileManager.default.copyItem(atPath: CLIFixtures.kdbx31, toPath: vault)
        let link = elsewhere.appendingPathComponent("link.kdbx").path
        #expect(Glibc.link(vault, link) == 0)
        let process = Process()
        process.executableURL = try ToolRunner.binary()
        process.arguments = ["watch", "--json", "--poll", "1", "--password-stdin", "--state-dir", directory.appendingPathComponent("state").path, vault]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        let received = OutputCollector(output.fileHandleForReading)
        try process.run()
        input.fileHandleForWriting.write(Data((CLIFixtures.kdbx31Password + "\n").utf8))
        try input.fileHandleForWriting.close()
        waitUntil("the first check") { kinds(parsedEvents(received.text)).contains("baseRecorded") }
        // Rewrite the shared inode in place through the other name: the folder watch sees nothing
        // (without --poll this test fails: checked).
        let edited = elsewhere.appendingPathComponent("edited.kdbx").path
        try FileManager.default.copyItem(atPath: link, toPath: edited)
        let kxc = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), ["keepassxc-cli", "add", "-q", edited, "Seen by polling"],
                                        input: Data((CLIFixtures.kdbx31Password + "\n").utf8), environment: ["QT_QPA_PLATFORM": "offscreen"])
        #expect(kxc.status == 0)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: link))
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: Data(contentsOf: URL(fileURLWithPath: edited)))
        try handle.close()
        waitUntil("the change found by the poll") { kinds(parsedEvents(received.text)).contains("reloaded") }
        kill(process.processIdentifier, SIGINT)
        process.waitUntilExit()
        return parsedEvents(String(decoding: received.all(), as: UTF8.self))
    }
}

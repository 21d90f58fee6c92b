import Foundation
import MyPassCrypto
import Testing
import TestSupport

/// The merge journal (`journal`) and `undo`: every writing merge recorded without a plain value,
/// explained again with the password, and taken back as a new edit that other devices converge on.
@Suite("journal and undo: merges recorded, explained, taken back (end to end)", .serialized)
struct JournalUndoTests {
    /// A vault and another device's copy of it with edits: a conflicting user name, a new field, a new
    /// entry, an entry deleted (into a recycle bin the copy created), an entry moved.
    struct Devices {
        let vault: ScratchVault
        let other: String

        init() throws {
            vault = try ScratchVault()
            other = vault.otherCopy
            try vault.diverge(here: [(["edit", vault.vault, "/No URL", "-u", "alice-local"], [])],
                              there: [(["edit", other, "/No URL", "-u", "bob-remote", "--field", "Pin=1234"], []), (["add", other, "/Added by B"], []),
                                      (["rm", other, "/Internet/Mail/Fastmail"], []), (["mv", other, "/Bänk & Co ✓/Ünïcode Bank", "/Internet"], [])])
        }

        /// The ids of the journal, newest first (no password).
        func ids() throws -> [String] {
            let listed = try ToolRunner.run(["journal", vault.vault, "--json", "--state-dir", vault.stateDirectory])
            #expect(listed.status == 0, "\(listed.standardError)")
            let json = try JSONSerialization.jsonObject(with: Data(listed.standardOutput.utf8)) as? [String: Any]
            return (json?["records"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
        }

        /// Everything of each entry but its times and history, and the groups, as pykeepass reads them.
        func content(_ path: String? = nil) throws -> [String] {
            let view = try ReferenceTools.view(.pykeepass, path: URL(fileURLWithPath: path ?? vault.vault), password: ScratchVault.password, keyFile: nil)
            let entries = view.entries.map { entry in
                [entry.uuid, entry.group, entry.title, entry.username, entry.password, entry.url, entry.notes, entry.tags.sorted().joined(separator: ","),
                 entry.fields.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ";"), "\(entry.inRecycleBin)"]
                    .joined(separator: "|")
            }
            return (entries + view.groups.map { "group " + $0 }).sorted()
        }

        func field(_ title: String, _ name: String) throws -> String? {
            guard let entry = try vault.pykeepass(title) else { return nil }
            return name == "UserName" ? entry.username : entry.fields[name]
        }
    }

    @Test("a merge is journaled (listed without a password, explained with it); undo right after restores the content exactly")
    func undoRightAfter() throws {
        let devices = try Devices()
        defer { devices.vault.remove() }
        let before = try devices.content()
        let bytesBefore = try Data(contentsOf: URL(fileURLWithPath: devices.vault.vault))
        #expect(try devices.vault.run(["merge", devices.vault.vault, devices.other]).status == 0)
        #expect(try devices.content() != before)
        let ids = try devices.ids()
        #expect(ids.count == 1)
        // The record names the bytes merged (as read for the merge), before and after.
        let listing = try ToolRunner.run(["journal", devices.vault.vault, "--json", "--state-dir", devices.vault.stateDirectory])
        let record = ((try JSONSerialization.jsonObject(with: Data(listing.standardOutput.utf8)) as? [String: Any])?["records"] as? [[String: Any]])?.first
        let inputs = record?["inputs"] as? [[String: Any]]
        #expect(inputs?.first?["sha256"] as? String == SHA256.hexHash(try Data(contentsOf: URL(fileURLWithPath: devices.other))))
        #expect(record?["beforeSHA256"] as? String == SHA256.hexHash(bytesBefore))
        #expect(record?["afterSHA256"] as? String == SHA256.hexHash(try Data(contentsOf: URL(fileURLWithPath: devices.vault.vault))))
        let listed = try ToolRunner.run(["journal", devices.vault.vault, "--state-dir", devices.vault.stateDirectory])
        #expect(listed.standardOutput.contains("merge  \(devices.other)") && listed.standardOutput.contains("conflictFieldChangedLater 1"), "\(listed.standardOutput)")
        let shown = try devices.vault.run(["journal", devices.vault.vault, "--show", ids[0]])
        #expect(shown.standardOutput.contains(#"/No URL UserName: ancestor (from history) "carol", local "alice-local", remote "bob-remote" -> remote by conflictFieldChangedLater"#),
                "\(shown.standardOutput)")
        let dry = try devices.vault.run(["undo", devices.vault.vault, ids[0], "--dry-run", "--json"])
        #expect(dry.status == 0, "\(dry.standardError)")
        #expect(try devices.content() != before, "a dry run writes nothing")
        let undone = try devices.vault.run(["undo", devices.vault.vault, ids[0], "--json"])
        #expect(undone.status == 0, "\(undone.standardError)")
        let report = try JSONSerialization.jsonObject(with: Data(undone.standardOutput.utf8)) as? [String: Any]
        #expect((report?["keptEditedSince"] as? [Any])?.isEmpty == true, "\(undone.standardOutput)")
        #expect(try devices.content() == before, "fields, entries, groups and the recycle bin are as before the merge")
        #expect(try devices.vault.pykeepass("No URL")?.historyCount ?? 0 >= 2, "the merged value went to history")
        // The journal holds no plain value: neither a protected one nor the unprotected user names of the explanation.
        let journal = URL(fileURLWithPath: devices.vault.stateDirectory)
        #expect(SecretScan.filesWithSecrets(under: journal).isEmpty)
        for file in try FileManager.default.subpathsOfDirectory(atPath: journal.path) {
            let text = String(decoding: (try? Data(contentsOf: journal.appendingPathComponent(file))) ?? Data(), as: UTF8.self)
            #expect(!text.contains("bob-remote") && !text.contains("alice-local"), "\(file) holds a value in clear")
        }
    }

    /// The journal file of record `id` ending in `suffix` (`.before.kdbx`, `.json`).
    static func journalFile(_ devices: Devices, _ id: String, _ suffix: String) throws -> URL {
        let state = URL(fileURLWithPath: devices.vault.stateDirectory)
        let path = try #require(try FileManager.default.subpathsOfDirectory(atPath: state.path).first { $0.hasSuffix(id + suffix) })
        return state.appendingPathComponent(path)
    }

    @Test("a journal record whose file was replaced (another database with the same password, its hash in the record fixed up too) or cut short is not used: 'the journal record is damaged', exit 6, the vault untouched")
    func damagedRecordRefused() throws {
        let devices = try Devices()
        defer { devices.vault.remove() }
        #expect(try devices.vault.run(["merge", devices.vault.vault, devices.other]).status == 0)
        let id = try #require(try devices.ids().first)
        let before = try #require(try Self.journalFile(devices, id, ".before.kdbx"))
        let summary = try Self.journalFile(devices, id, ".json")
        let original = try Data(contentsOf: before)
        let vaultBytes = try Data(contentsOf: URL(fileURLWithPath: devices.vault.vault))
        // Another database with the same password (a fixture of the same template: same root group).
        let other = try Data(contentsOf: URL(fileURLWithPath: CLIFixtures.vault("py-4.0-chacha20-argon2id-none.kdbx")))
        let originalSummary = try Data(contentsOf: summary)
        let fixedUp = String(decoding: originalSummary, as: UTF8.self)
            .replacingOccurrences(of: SHA256.hexHash(original), with: SHA256.hexHash(other))
        for (label, file, record) in [("replaced", other, originalSummary), ("replaced, hash fixed up", other, Data(fixedUp.utf8)),
                                      ("cut short", original.prefix(original.count / 2), originalSummary)] {
            try file.write(to: before)
            try record.write(to: summary)
            let undone = try devices.vault.run(["undo", devices.vault.vault, id])
            #expect(undone.status == 6, "\(label): \(undone.standardError)")
            #expect(undone.standardError.contains("the journal record \(id) is damaged"), "\(label): \(undone.standardError)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: devices.vault.vault)) == vaultBytes, "\(label): the vault was written")
        }
    }

    @Test("after another program changed the master password, a record sealed before says which password it needs (exit 3), in undo and journal --show")
    func recordSealedWithEarlierKey() throws {
        let devices = try Devices()
        defer { devices.vault.remove() }
        #expect(try devices.vault.run(["merge", devices.vault.vault, devices.other]).status == 0)
        let id = try #require(try devices.ids().first)
        let changed = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), ["keepassxc-cli", "db-edit", "-q", "-p", devices.vault.vault],
                                            input: Data((ScratchVault.password + "\nnew-pässword\nnew-pässword\n").utf8),
                                            environment: ["QT_QPA_PLATFORM": "offscreen"])
        #expect(changed.status == 0, "\(changed.standardError)")
        for arguments in [["undo", devices.vault.vault, id], ["journal", devices.vault.vault, "--show", id]] {
            let outcome = try ToolRunner.run(arguments + ["--password-stdin", "--state-dir", devices.vault.stateDirectory], input: "new-pässword\n")
            #expect(outcome.status == 3, "\(arguments[0]): \(outcome.standardError)")
            #expect(outcome.standardError.contains("before the master key changed"), "\(arguments[0]): \(outcome.standardError)")
        }
    }

    @Test("an undo is journaled itself and can be undone: the merge's result comes back")
    func undoOfUndo() throws {
        let devices = try Devices()
        defer { devices.vault.remove() }
        #expect(try devices.vault.run(["merge", devices.vault.vault, devices.other]).status == 0)
        let merged = try devices.content()
        let id = try #require(try devices.ids().first)
        #expect(try devices.vault.run(["undo", devices.vault.vault, id]).status == 0)
        #expect(try devices.content() != merged)
        let ids = try devices.ids()
        #expect(ids.count == 2, "the undo is not journaled: \(ids)")
        let listed = try ToolRunner.run(["journal", devices.vault.vault, "--state-dir", devices.vault.stateDirectory])
        #expect(listed.standardOutput.contains("undo"), "\(listed.standardOutput)")
        let again = try devices.vault.run(["undo", devices.vault.vault, ids[0]])
        #expect(again.status == 0, "\(again.standardError)")
        let after = try devices.content()
        #expect(after == merged, "undoing the undo brings the merge's result back: missing \(Set(merged).subtracting(after)), unexpected \(Set(after).subtracting(merged)); \(again.standardOutput)")
    }

    @Test("undo after later edits keeps those edits (reported); undo of the older of two merges keeps the newer one")
    func undoKeepsLaterWork() throws {
        let devices = try Devices()
        defer { devices.vault.remove() }
        #expect(try devices.vault.run(["merge", devices.vault.vault, devices.other]).status == 0)
        // A second device's change, merged later.
        let third = devices.vault.directory.appendingPathComponent("third.kdbx").path
        try FileManager.default.copyItem(atPath: devices.vault.vault, toPath: third)
        waitForNextClockSecond()  // the next edit is stamped a second later (KDBX times: whole seconds)
        #expect(try devices.vault.run(["edit", third, "/Internet/GitHub", "--field", "Team=core"]).status == 0)
        #expect(try devices.vault.run(["merge", devices.vault.vault, third]).status == 0)
        // And a local edit of a field the first merge set.
        #expect(try devices.vault.run(["edit", devices.vault.vault, "/No URL", "-u", "carol-again"]).status == 0)
        let ids = try devices.ids()
        #expect(ids.count == 2)
        let undone = try devices.vault.run(["undo", devices.vault.vault, ids[1]])
        #expect(undone.status == 0, "\(undone.standardError)")
        #expect(undone.standardOutput.contains("left as it is") && undone.standardOutput.contains("UserName"), "\(undone.standardOutput)")
        #expect(try devices.field("No URL", "UserName") == "carol-again", "the later edit stays")
        #expect(try devices.field("No URL", "Pin") == nil, "the first merge's field is gone")
        #expect(try devices.field("GitHub", "Team") == "core", "the later merge stays")
        #expect(try devices.vault.pykeepass("Added by B") == nil)
        #expect(try devices.vault.pykeepass("Fastmail")?.inRecycleBin == false)
        let unknown = try devices.vault.run(["undo", devices.vault.vault, "123-nothing"])
        #expect(unknown.status == 2 && unknown.standardError.contains("no merge 123-nothing"), "\(unknown.standardError)")
    }

    @Test("an undo on device A reaches device B through B's watcher as a conflict copy; both converge")
    func undoSyncsToOtherDevice() throws {
        let devices = try Devices()
        defer { devices.vault.remove() }
        #expect(try devices.vault.run(["merge", devices.vault.vault, devices.other]).status == 0)
        // Device B: a copy of the merged vault in its own folder, with its own state.
        let deviceB = try ScratchVault()
        defer { deviceB.remove() }
        try FileManager.default.removeItem(atPath: deviceB.vault)
        try FileManager.default.copyItem(atPath: devices.vault.vault, toPath: deviceB.vault)
        waitForNextClockSecond()  // the next edit is stamped a second later (KDBX times: whole seconds)
        let ids = try devices.ids()
        #expect(try devices.vault.run(["undo", devices.vault.vault, ids[0]]).status == 0)
        // A's undone vault arrives at B as a Syncthing conflict copy; B's watcher folds it in.
        let copy = deviceB.directory.appendingPathComponent("vault.sync-conflict-20261201-101010-AAAAAAA.kdbx").path
        try FileManager.default.copyItem(atPath: devices.vault.vault, toPath: copy)
        let watched = try deviceB.run(["watch", deviceB.vault, "--once", "--json", "--copy-grace", "0"])
        #expect(watched.status == 0, "\(watched.standardError)")
        #expect(watched.standardOutput.contains("conflictCopyMerged"), "\(watched.standardOutput)")
        #expect(try devices.content(deviceB.vault) == (try devices.content()), "B converged on A's undo")
        let again = try devices.vault.run(["merge", devices.vault.vault, deviceB.vault, "--dry-run", "--json", "--exit-code"])
        #expect(again.status == 0, "merging B back changes nothing: \(again.standardOutput)")
    }

    @Test("retention: the newest 20 records are kept")
    func retention() throws {
        let devices = try Devices()
        defer { devices.vault.remove() }
        for round in 1...21 {
            #expect(try devices.vault.run(["edit", devices.other, "/No URL", "--field", "Round=\(round)"]).status == 0)
            #expect(try devices.vault.run(["merge", devices.vault.vault, devices.other]).status == 0)
        }
        let ids = try devices.ids()
        #expect(ids.count == 20, "\(ids.count) records")
        let files = try FileManager.default.contentsOfDirectory(atPath: devices.vault.stateDirectory)
            .filter { $0.hasSuffix(".journal") }
            .flatMap { try FileManager.default.contentsOfDirectory(atPath: devices.vault.stateDirectory + "/" + $0) }
        #expect(files.count == 20 * 4, "each record's four files, nothing of the trimmed one: \(files.count)")
    }
}

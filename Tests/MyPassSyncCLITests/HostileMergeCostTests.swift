import Foundation
import KDBXFormat
import MyPassCore
import Testing
import TestSupport

/// Small planted versions that used to cost minutes or gigabytes: a history of thousands of items
/// sharing one modification time (merged by comparing each with each), and a compressed payload that
/// inflates to far more than the vault's own (read to the end). Each is merged by the real binary,
/// stopped after a generous bound.
@Suite("Hostile versions: bounded cost to merge", .serialized)
struct HostileMergeCostTests {
    static let password = "hostile-cost-pw"
    static let start = Timestamp(unixSeconds: 1_700_000_000)

    /// A scratch folder with the password in a file, and the vault (one entry, cheap KDF) written there.
    private func folder() throws -> (root: URL, vault: Vault, passwordFile: String) {
        let root = try CLIFixtures.scratch()
        let passwordFile = root.appendingPathComponent("pw.txt").path
        try Data((Self.password + "\n").utf8).write(to: URL(fileURLWithPath: passwordFile))
        let entry = Entry(uuid: UUID(), times: Times(allAt: Self.start), fields: [
            EntryField(key: EntryField.title, value: FieldValue("Mail", isProtected: false)),
            EntryField(key: EntryField.password, value: FieldValue("s3cret-cost", isProtected: true)),
        ])
        let vault = Vault(meta: Meta(), root: Group(uuid: UUID(), name: "Root", times: Times(allAt: Self.start), entries: [entry]))
        return (root, vault, passwordFile)
    }

    private func write(_ vault: Vault, to url: URL) throws {
        let settings = FormatSettings(version: .v4_0, cipher: .aes256, kdf: .aesKDF(seed: Data(count: 32), rounds: 1_000), compression: .gzip)
        try KDBXWriter.serialize(vault, settings: settings, key: try CompositeKey(password: Self.password)).file.write(to: url)
    }

    /// `mypass-sync merge LOCAL COPY` stopped after `bound` seconds.
    private func merge(_ local: URL, _ copy: URL, passwordFile: String, state: URL, bound: Int) throws -> ProcessRunner.Outcome {
        try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/timeout"),
                              ["\(bound)", try ToolRunner.binary().path, "merge", "--password-command", "cat '\(passwordFile)'",
                               "--state-dir", state.path, "--", local.path, copy.path])
    }

    @Test("a copy whose entry holds 4,000 history items of one second merges like any other: every item kept once, in bounded time")
    func sameSecondHistory() throws {
        let (root, vault, passwordFile) = try folder()
        defer { try? FileManager.default.removeItem(at: root) }
        let uuid = vault.root.entries[0].uuid
        // The copy's device edited the entry once more; its history holds the original and 4,000 items of one second.
        var planted = try vault.updatingEntry(uuid, at: Timestamp(unixSeconds: 1_700_000_050)) {
            $0.setField(EntryField.userName, FieldValue("planted-user", isProtected: false))
        }
        let original = vault.root.entries[0]
        planted.root.entries[0].history += (0..<4_000).map { index in
            var item = original
            item.times.lastModified = Timestamp(unixSeconds: 1_700_000_010)
            item.setField(EntryField.notes, FieldValue("planted note \(index)", isProtected: false))
            return item
        }
        let local = try vault.updatingEntry(uuid, at: Timestamp(unixSeconds: 1_700_000_100)) {
            $0.setField(EntryField.notes, FieldValue("edited here", isProtected: false))
        }
        let localURL = root.appendingPathComponent("vault.kdbx"), copyURL = root.appendingPathComponent("planted.kdbx")
        try write(local, to: localURL)
        try write(planted, to: copyURL)
        // Comparing each item with each made 2,000 items cost minutes; 4,000 would cost a quarter of an hour.
        let outcome = try merge(localURL, copyURL, passwordFile: passwordFile, state: root.appendingPathComponent("state"), bound: 120)
        #expect(outcome.status == 0, "merge failed or was stopped (124: still running after 120 s): \(outcome.standardError)")
        let merged = try KDBXReader.open(Data(contentsOf: localURL), key: try CompositeKey(password: Self.password)).vault.root.entries[0]
        #expect(merged.field(EntryField.notes)?.text == "edited here" && merged.field(EntryField.userName)?.text == "planted-user")
        // The history keeps as many items as the copy's (the oldest make room for the two versions combined), each once.
        let notes = merged.history.compactMap { $0.field(EntryField.notes)?.text }
        let kept = Set(notes).intersection((0..<4_000).map { "planted note \($0)" })
        #expect(merged.history.count == 4_001 && notes.count == Set(notes).count && kept.count >= 3_998,
                "\(merged.history.count) history items, \(Set(notes).count) distinct notes, \(kept.count) planted ones")
    }

    @Test("a copy of a few hundred KB inflating to 200 MB of XML beside a small vault is refused after the budget's 64 MiB, nothing written")
    func inflationBeyondTheBudget() throws {
        let (root, vault, passwordFile) = try folder()
        defer { try? FileManager.default.removeItem(at: root) }
        let uuid = vault.root.entries[0].uuid
        let localURL = root.appendingPathComponent("vault.kdbx"), copyURL = root.appendingPathComponent("planted.kdbx")
        try write(vault, to: localURL)
        let planted = try vault.updatingEntry(uuid, at: Timestamp(unixSeconds: 1_700_000_100)) {
            $0.setField(EntryField.notes, FieldValue(String(repeating: "0", count: 200 << 20), isProtected: false))
        }
        try write(planted, to: copyURL)
        let copySize = try #require(try FileManager.default.attributesOfItem(atPath: copyURL.path)[.size] as? Int)
        #expect(copySize < 1 << 20, "200 MB of zeros compress to \(copySize) bytes")
        let before = try Data(contentsOf: localURL)
        let outcome = try merge(localURL, copyURL, passwordFile: passwordFile, state: root.appendingPathComponent("state"), bound: 120)
        #expect(outcome.status != 0 && outcome.status != 124, "the inflated copy was merged (or still running): \(outcome.status)")
        #expect(outcome.standardError.contains("exceeds"), "\(outcome.standardError)")
        #expect(try Data(contentsOf: localURL) == before, "the vault was written")
    }
}

import Foundation
import KDBXFormat
import MyPassCore
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The daemon's notices stay one per burst and short whatever is planted in the folder: junk copies
/// by the hundred, entry titles with line breaks, bidi overrides or a megabyte of text, and a copy
/// adding 200,000 entries (whose notice must not hold up `daemon status`). Real daemon, real dunst.
@Suite("daemon notices: bounded and coalesced against planted copies (end to end with dunst)", .serialized)
struct DaemonNoticeBoundsTests {
    static let password = "notice-bounds-pw"
    static let start = Timestamp(unixSeconds: 1_700_000_000)

    /// The library's vault of one entry (cheap KDF), its root group's UUID fixed so that copies are the same database.
    static func smallVault() -> Vault {
        let entry = Entry(uuid: UUID(), times: Times(allAt: start), fields: [
            EntryField(key: EntryField.title, value: FieldValue("Mail", isProtected: false)),
            EntryField(key: EntryField.password, value: FieldValue("s3cret-notice", isProtected: true)),
        ])
        return Vault(meta: Meta(), root: Group(uuid: UUID(), name: "Root", times: Times(allAt: start), entries: [entry]))
    }

    /// `vault` serialized with one fixed header (AES-KDF, 1,000 rounds): every version shares the vault's key derivation.
    static func bytes(of vault: Vault) throws -> Data {
        let settings = FormatSettings(version: .v4_0, cipher: .aes256, kdf: .aesKDF(seed: Data(count: 32), rounds: 1_000), compression: .gzip)
        return try KDBXWriter.serialize(vault, settings: settings, key: try CompositeKey(password: password)).file
    }

    /// `vault` with `entries` added under its root, stamped later than the original.
    static func adding(_ entries: [Entry], to vault: Vault) -> Vault {
        var copy = vault
        copy.root.entries += entries
        return copy
    }

    /// An entry titled `title` made after `start`.
    static func entry(_ title: String) -> Entry {
        Entry(uuid: UUID(), times: Times(allAt: Timestamp(unixSeconds: 1_700_000_100)),
              fields: [EntryField(key: EntryField.title, value: FieldValue(title, isProtected: false))])
    }

    /// One watched vault: a private bus with dunst on it, a home, `vault.kdbx` written from `vault`
    /// and configured (password through a command reading a 0600 file), the daemon up and its base recorded.
    final class Scene {
        let session: SecretServiceSession
        let notices: NotificationServer
        let home: DaemonHome
        let vault: String
        let daemon: DaemonProcess

        init(_ contents: Vault) throws {
            session = try SecretServiceSession()
            notices = try NotificationServer(bus: session.environment)
            home = try DaemonHome(root: session.home, extra: session.environment)
            vault = home.sync.appendingPathComponent("vault.kdbx").path
            try DaemonNoticeBoundsTests.bytes(of: contents).write(to: URL(fileURLWithPath: vault))
            let command = try home.passwordCommand(DaemonNoticeBoundsTests.password, name: "vault.pw")
            let added = try home.tool(["daemon", "add", vault, "--password-command", command])
            #expect(added.status == 0, "\(added.standardError)")
            daemon = try DaemonProcess(home)
            #expect(daemon.waitFor("baseRecorded", vault: vault), "\(daemon.outputText)\(daemon.errorText)")
        }

        deinit {
            _ = daemon.end(with: SIGKILL)
            session.stop()
        }

        /// Puts `bytes` into the folder as the Syncthing conflict copy `name` with one rename (never seen half written).
        func drop(_ bytes: Data, as name: String) throws {
            let work = home.root.appendingPathComponent("work-\(UUID().uuidString)")
            try bytes.write(to: work)
            #expect(rename(work.path, home.sync.appendingPathComponent(name).path) == 0)
        }

        /// The notices dunst received so far (dunst 1.9's history keeps no urgency, so none is checked).
        func received() throws -> [NotificationServer.Notice] {
            try notices.history().notices
        }
    }

    @Test("200 byte-flipped junk copies planted at once: dunst gets exactly one notice naming a few, then \"and N more\", at most 1,000 characters")
    func plantedJunk() throws {
        let scene = try Scene(Self.smallVault())
        let original = try Data(contentsOf: URL(fileURLWithPath: scene.vault))
        // The header (and so the key derivation) is left as it is; the payload's last bytes are flipped, each copy differently.
        #expect(original.count > 600, "\(original.count) bytes")
        func junk(_ index: Int) -> Data {
            var bytes = original
            for offset in (bytes.count - 96)..<bytes.count { bytes[offset] ^= 0xA5 }
            bytes[bytes.count - 97 - index % 64] ^= UInt8(1 + index / 64)
            return bytes
        }
        #expect(throws: (any Error).self, "a junk copy opens") { try KDBXReader.open(junk(0), key: try CompositeKey(password: Self.password)) }
        for index in 0..<200 {
            try scene.drop(junk(index), as: String(format: "vault.sync-conflict-20261204-1010%02d-JUNK%03d.kdbx", index % 60, index))
        }

        var received = try scene.notices.waitForNotice(containing: "conflict copies were not merged", within: 60)
        #expect(received.contains { $0.summary.contains("vault.kdbx: 200 conflict copies were not merged") },
                "\(received.map(\.summary)); \(scene.daemon.errorText)")
        // Every copy told about once, the event stream quiet for 3 s, then 5 s more for a second notice.
        #expect(scene.daemon.waitFor("conflictCopyLeft", vault: scene.vault, count: 200, within: 60), "\(scene.daemon.events.count) events")
        var (printed, since) = (scene.daemon.outputText.count, Date())
        #expect(pollUntil(timeout: 60, interval: 0.25) {
            let now = scene.daemon.outputText.count
            if now != printed { (printed, since) = (now, Date()) }
            return Date().timeIntervalSince(since) >= 3
        }, "the daemon kept printing events")
        #expect(try !pollUntil(timeout: 5, interval: 0.25) { try scene.received().count > 1 }, "a second notice came")

        received = try scene.received()
        #expect(received.count == 1, "\(received.count) notices: \(received.map(\.summary).prefix(5))")
        let notice = try #require(received.first)
        #expect(notice.application == "mypass-sync")
        let body = notice.body
        #expect(body.count <= 1_000, "\(body.count) characters")
        // "… JUNK003.kdbx, … and 195 more": the names shown and the rest counted make the 200.
        let named = body.components(separatedBy: "-JUNK").count - 1
        let more = body.range(of: #"and \d+ more$"#, options: .regularExpression).flatMap { Int(body[$0].split(separator: " ")[1]) }
        #expect(named >= 1 && more.map { named + $0 } == 200, "\(named) named, \(String(describing: more)) more: \(body)")
        #expect(scene.daemon.state(of: scene.vault) != nil, "the daemon no longer answers")
    }

    @Test("a copy adding titles with a line break, a right-to-left override and a megabyte: the notice shows them escaped and cut, at most 1,000 characters")
    func hostileTitles() throws {
        let base = Self.smallVault()
        let scene = try Scene(base)
        let broken = "Line one\nline two", override = "Invoice \u{202E}fdp.exe", huge = String(repeating: "A", count: 1 << 20)
        let copy = Self.adding([Self.entry(broken), Self.entry(override), Self.entry(huge)], to: base)
        try scene.drop(try Self.bytes(of: copy), as: "vault.sync-conflict-20261204-101001-HOSTILE.kdbx")
        #expect(scene.daemon.waitFor("conflictCopyMerged", vault: scene.vault, within: 60), "\(scene.daemon.errorText)")

        let received = try scene.notices.waitForNotice(containing: "vault.kdbx: merged", within: 30)
        let notice = try #require(received.first { $0.summary.contains("vault.kdbx: merged") }, "\(received.map(\.summary))")
        let body = notice.body
        #expect(body.count <= 1_000, "\(body.count) characters")
        #expect(!(body + notice.summary).unicodeScalars.contains("\u{202E}") && body.contains(#"Invoice \u{202e}fdp.exe"#), "\(body.prefix(300))")
        #expect(body.contains("AAAA") && !body.contains(String(repeating: "A", count: 81)), "the megabyte title was not cut to 80 characters")
        // The product bug this marks: `DesktopNotice` splits the body into the planner's lines at "\n"
        // before escaping each, so a line break inside a title reaches the server raw. Unmark once fixed.
        #expect(!body.contains("\n") && body.contains(#"Line one\nline two"#), "\(body.prefix(300))")
    }

    @Test("a copy adding 200,000 entries is folded while `daemon status --json` is asked every 0.2 s: every answer comes, each within 10 s (the longest printed)")
    func statusDuringHugeMerge() throws {
        // A copy's payload may inflate to a hundred times the vault's file (64 MiB at least): the vault
        // carries 3 MB of random notes, so that the copy's 200,000 entries of XML are well within that.
        var random = SeededRandom(seed: 0x5eed_2026)
        let noise = Data((0..<(3 << 20)).map { _ in UInt8.random(in: 0...255, using: &random) }).base64EncodedString()
        var base = Self.smallVault()
        base.root.entries[0].setField(EntryField.notes, FieldValue(noise, isProtected: false))
        let scene = try Scene(base)
        let copy = Self.adding((0..<200_000).map { Self.entry(String(format: "Bulk %06d", $0)) }, to: base)
        try scene.drop(try Self.bytes(of: copy), as: "vault.sync-conflict-20261204-101002-BULKDEV.kdbx")

        var longest: TimeInterval = 0, calls = 0, failures: [String] = []
        var merged = false
        let started = Date()
        let done = try pollUntil(timeout: 900, interval: 0.2) {
            let asked = Date()
            let outcome = try scene.home.tool(["daemon", "status", "--json"])
            let took = Date().timeIntervalSince(asked)
            longest = max(longest, took)
            calls += 1
            if outcome.status != 0 || took > 10 { failures.append("status \(outcome.status) after \(String(format: "%.2f", took)) s") }
            let document = try? JSONSerialization.jsonObject(with: Data(outcome.standardOutput.utf8)) as? [String: Any]
            if (document?["vaults"] as? [[String: Any]])?.first?["lastMerge"] is [String: Any] { merged = true }
            // Asked on until the notice of the merge is in (planned after it, 2 s quiet time), or an answer failed.
            return try !failures.isEmpty || merged && scene.notices.history().notices.contains { $0.summary.contains("vault.kdbx: merged") }
        }
        print("bench: daemon status during a 200,000-entry merge: longest round trip \(String(format: "%.3f", longest)) s over \(calls) calls, "
              + "\(String(format: "%.0f", Date().timeIntervalSince(started))) s in all")
        #expect(done, "the merge and its notice did not come within 900 s (\(calls) status calls, merged: \(merged)); \(scene.daemon.errorText)")
        #expect(failures.isEmpty, "\(failures.prefix(5))")
        #expect(longest <= 10, "a status call took \(longest) s")
        let notice = try scene.notices.history().notices.first { $0.summary.contains("vault.kdbx: merged") }
        #expect((notice?.body.count ?? 0) <= 1_000 && notice?.body.hasPrefix("200000 changes") == true, "\(String(describing: notice?.body.prefix(200)))")
    }
}

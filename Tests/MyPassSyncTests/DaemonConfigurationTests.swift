import Foundation
#if canImport(Glibc)
import Glibc
#endif
import SyncFiles
import MyPassCore
@testable import SyncDaemon
import SyncCommit
import SyncWatch
import Testing
import TestSupport

/// The daemon's configuration file and its notice rules: pure values, no process.
@Suite("daemon.conf and the notice planner")
struct DaemonConfigurationTests {
    @Test("the file as written reads back as the same vaults; no password is ever part of it")
    func roundTrip() {
        var first = DaemonVault(path: "/home/u/Sync/personal.kdbx", credentials: CredentialReference(password: .command("pass show keepass/personal")))
        first.policy = .ask
        first.pollInterval = 30
        first.notices = false
        let second = DaemonVault(path: "/home/u/Sync/family.kdbx",
                                 credentials: CredentialReference(password: .keyring, keyFile: "/home/u/keys/family.keyx",
                                                                  challengeResponse: .secretFile("/home/u/keys/yubikey.hex")))
        let third = DaemonVault(path: "/home/u/Sync/work.kdbx", credentials: CredentialReference(password: .none, keyFile: "/home/u/keys/work.key"))
        var configuration = DaemonConfiguration()
        configuration.vaults = [first, second, third]
        let read = DaemonConfiguration.parse(configuration.text)
        #expect(read.problems.isEmpty, "\(read.problems)")
        #expect(read.vaults == [first, second, third])
        #expect(read.vaults.map(\.credentials.kind) == [.passwordCommand, .keyring, .keyFile])
    }

    @Test("a value with a line break is never written (it would be a line of its own); a file others may write is not read")
    func hostileValuesAndFiles() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("daemon-conf-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/daemon.conf"
        var configuration = DaemonConfiguration()
        configuration.vaults = [DaemonVault(path: "/home/u/v.kdbx", credentials: CredentialReference(password: .command("pass show v\npassword-command = curl evil")))]
        #expect(throws: FileError.self) { try configuration.save(to: path) }
        #expect(!FileManager.default.fileExists(atPath: path))
        configuration.vaults = [DaemonVault(path: "/home/u/v.kdbx", credentials: CredentialReference(password: .command("pass show v")))]
        try configuration.save(to: path)
        #expect(try DaemonConfiguration.load(from: path).vaults == configuration.vaults)
        #expect(chmod(path, 0o666) == 0)
        #expect(throws: FileError.self) { try DaemonConfiguration.load(from: path) }
    }

    @Test("the README's example configuration reads as it says, without a problem")
    func readmeExample() throws {
        let readme = try String(contentsOfFile: #filePath.components(separatedBy: "/Tests/")[0] + "/README.md", encoding: .utf8)
        let block = try #require(readme.components(separatedBy: "```ini\n").dropFirst().first?.components(separatedBy: "```").first)
        let read = DaemonConfiguration.parse(block)
        #expect(read.problems.isEmpty, "\(read.problems)")
        let vault = try #require(read.vaults.first)
        #expect(vault.path == "/home/me/Sync/personal.kdbx" && vault.credentials.kind == .keyring && vault.pollInterval == 30 && vault.notices)
    }

    @Test("add, change and remove keep what a person wrote: comments, order and layout of the other sections")
    func editsKeepThePersonsText() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("daemon-conf-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let path = folder + "/daemon.conf"
        let written = """
            # My vaults. Edited by hand.

            # The family vault: Anna's phone syncs it too.
            [vault /home/u/family.kdbx]
              password-from   =   keyring
            # ask: the children's tablet saves blindly
            policy = ask

            [vault /home/u/work.kdbx]
            key-file = /home/u/work.key
            no-password = yes

            # Personal, on the NAS.
            [vault /home/u/personal.kdbx]
            password-command = pass show personal
            poll = 60
            # trailing note

            """
        #expect(FileManager.default.createFile(atPath: path, contents: Data(written.utf8), attributes: [.posixPermissions: 0o600]))
        var configuration = try DaemonConfiguration.load(from: path)
        #expect(configuration.problems.isEmpty, "\(configuration.problems)")
        // Added: appended; every line written before is still there, in its place.
        configuration.vaults.append(DaemonVault(path: "/home/u/shared.kdbx", credentials: CredentialReference(password: .keyring)))
        try configuration.save(to: path)
        let added = try String(contentsOfFile: path, encoding: .utf8)
        #expect(added.hasPrefix(written), "\(added)")
        #expect(try DaemonConfiguration.load(from: path).vaults == configuration.vaults)
        // Changed: its comments stay, its settings are rewritten; the other sections are untouched.
        configuration.vaults[0].policy = .merge
        try configuration.save(to: path)
        let changed = try String(contentsOfFile: path, encoding: .utf8)
        #expect(changed.contains("# The family vault: Anna's phone syncs it too.\n[vault /home/u/family.kdbx]\n# ask: the children's tablet saves blindly\npassword-from = keyring\npolicy = merge"),
                "\(changed)")
        #expect(changed.contains("\n[vault /home/u/work.kdbx]\nkey-file = /home/u/work.key\nno-password = yes\n\n# Personal, on the NAS."), "\(changed)")
        #expect(changed.hasPrefix("# My vaults. Edited by hand.\n\n"))
        #expect(try DaemonConfiguration.load(from: path).vaults == configuration.vaults)
        // Removed: its section and the comment above it go, no double blank line is left.
        configuration.vaults.removeAll { $0.path == "/home/u/personal.kdbx" }
        try configuration.save(to: path)
        let removed = try String(contentsOfFile: path, encoding: .utf8)
        #expect(!removed.contains("personal") && !removed.contains("NAS") && !removed.contains("trailing note"), "\(removed)")
        #expect(!removed.contains("\n\n\n"), "\(removed)")
        #expect(removed.contains("# ask: the children's tablet saves blindly"))
        #expect(try DaemonConfiguration.load(from: path).vaults == configuration.vaults)
    }

    @Test("generated edit sequences: the file always reads back as the configuration, and the comments of the vaults kept stay",
          arguments: 1...200)
    func generatedEdits(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        func vault(_ number: Int) -> DaemonVault {
            var vault = DaemonVault(path: "/v/\(number).kdbx", credentials: CredentialReference(password: .command("pass show v\(number)")))
            vault.policy = [.merge, .reload, .ask].randomElement(using: &random)!
            vault.pollInterval = Bool.random(using: &random) ? Double(Int.random(in: 1...90, using: &random)) : nil
            vault.notices = Bool.random(using: &random)
            return vault
        }
        // A person's file: its own comment, then each section with a comment right above it and one
        // inside, its settings in any order, a blank line between sections or none.
        var configuration = DaemonConfiguration()
        var text = "# top\n"
        for number in 0..<Int.random(in: 0...4, using: &random) {
            let made = vault(number)
            configuration.vaults.append(made)
            text += number == 0 || Bool.random(using: &random) ? "\n" : ""
            text += "# about \(number)\n[vault \(made.path)]\n# inside \(number)\n"
            var lines = made.credentials.settingLines + ["policy = \(made.policy.rawValue)", "notify = \(made.notices ? "on" : "off")"]
            if let poll = made.pollInterval { lines.append("poll = \(Int(poll))") }
            text += lines.shuffled(using: &random).joined(separator: "\n") + "\n"
        }
        #expect(DaemonConfiguration.parse(text).vaults == configuration.vaults, "seed \(seed): the generated file does not say its vaults")
        var next = 10
        for step in 0..<Int.random(in: 1...6, using: &random) {
            switch Int.random(in: 0..<3, using: &random) {
            case 0:
                configuration.vaults.append(vault(next))
                next += 1
            case 1 where !configuration.vaults.isEmpty:
                configuration.vaults.remove(at: Int.random(in: 0..<configuration.vaults.count, using: &random))
            default:
                guard !configuration.vaults.isEmpty else { continue }
                let index = Int.random(in: 0..<configuration.vaults.count, using: &random)
                configuration.vaults[index] = { var changed = vault(0); changed.path = configuration.vaults[index].path; return changed }()
            }
            text = configuration.text(updating: text)
            let read = DaemonConfiguration.parse(text)
            #expect(read.problems.isEmpty && read.vaults == configuration.vaults, "seed \(seed), step \(step): \(text)")
            #expect(text.hasPrefix("# top\n"), "seed \(seed), step \(step): the file's own comment went")
            #expect(!text.contains("\n\n\n"), "seed \(seed), step \(step): double blank line")
            for kept in configuration.vaults {
                let number = kept.path.dropFirst(3).dropLast(5)
                guard Int(number)! < 10 else { continue }  // a vault of the person's file
                #expect(text.contains("# about \(number)\n[vault \(kept.path)]") && text.contains("# inside \(number)"),
                        "seed \(seed), step \(step): a comment of a kept vault went")
            }
            for number in 0..<10 where !configuration.vaults.contains(where: { $0.path == "/v/\(number).kdbx" }) {
                #expect(!text.contains("# about \(number)\n") && !text.contains("# inside \(number)\n"),
                        "seed \(seed), step \(step): a removed vault's comment stayed")
            }
        }
    }

    @Test("each line that cannot be used is named with its number and skipped; the rest is used")
    func badLines() {
        let text = """
            # comment
            policy = merge
            [vault /a.kdbx]
            password-command = cat /a.pw
            colour = blue
            poll = -3
            policy = sometimes
            no equals sign here
            [vault relative.kdbx]
            password-from = keyring
            [vault /b.kdbx]
            key-file = /b.key
            [vault /c.kdbx]
            password-from = keyring
            password-command = cat /c.pw
            [vault /a.kdbx]
            no-password = yes
            key-file = /a.key
            [section]
            \(String(repeating: "x", count: 5000))
            """
        let read = DaemonConfiguration.parse(text)
        #expect(read.vaults.map(\.path) == ["/a.kdbx"])
        #expect(read.vaults.first?.policy == .merge && read.vaults.first?.pollInterval == nil)
        #expect(read.problems.map(\.line) == [2, 5, 6, 7, 8, 9, 10, 11, 13, 16, 19, 20], "\(read.problems)")
        #expect(read.problems.first { $0.line == 11 }?.message.contains("no password-command") == true)
        #expect(read.problems.first { $0.line == 16 }?.message.contains("configured twice") == true)
    }

    @Test("a burst of merged copies is one notice, sent after the quiet time, naming the entries; problems are sent at once")
    func coalescing() {
        var planner = NoticePlanner(quietTime: 2, longestWait: 30)
        let start = Date(timeIntervalSince1970: 1_000_000)
        let vault = "/home/u/Sync/personal.kdbx"
        func merged(_ title: String) -> WatchEvent {
            .conflictCopyMerged(vault: vault, copy: "/c", keptAs: "/k",
                                changes: [Change(.added, .entry, uuid: UUID(), path: "/Internet/\(title)", title: title)], explanation: [])
        }
        #expect(planner.take(merged("Mail"), at: start) == nil)
        #expect(planner.take(merged("Bank"), at: start.addingTimeInterval(1)) == nil)
        #expect(planner.due(at: start.addingTimeInterval(2.5)).isEmpty, "more may follow within the quiet time")
        let due = planner.due(at: start.addingTimeInterval(3.1))
        #expect(due.count == 1)
        #expect(due.first?.summary == "personal.kdbx: merged 2 conflict copies")
        #expect(due.first?.body == "2 changes: /Internet/Mail, /Internet/Bank")
        #expect(planner.nextDue == nil)
        let problem = planner.take(.keyChanged(vault: vault), at: start)
        #expect(problem?.urgency == .critical && problem?.summary == "personal.kdbx: the vault no longer opens")
        #expect(planner.take(.decisionNeeded(vault: vault, version: "v"), at: start)?.actions == [.merge, .reload, .overwrite])
        #expect(planner.take(.baseRecorded(vault: vault), at: start) == nil)
        let refused = planner.take(.refused(vault: vault, reason: .rollback(olderEntries: 2), version: "v"), at: start)
        #expect(refused?.summary == "personal.kdbx: an older version was refused" && refused?.body.contains("older version") == true)
        #expect(refused?.actions == [.merge, .reload, .overwrite] && refused?.urgency == .critical)
        let otherDatabase = planner.take(.refused(vault: vault, reason: .otherDatabase, version: "v"), at: start)
        #expect(otherDatabase?.summary == "personal.kdbx: another database was refused" && otherDatabase?.actions == [.reload, .overwrite])
        #expect(planner.take(.conflictCopyLeft(vault: vault, copy: "/s/personal.sync-conflict-x.kdbx", reason: .otherCredentials), at: start) == nil,
                "a copy left unmerged is collected like a merged one")
        let left = planner.due(at: start.addingTimeInterval(2.1))
        #expect(left.count == 1 && left.first?.summary == "personal.kdbx: a conflict copy was not merged", "\(left)")
        #expect(left.first?.body == "Not merged (otherCredentials): personal.sync-conflict-x.kdbx" && left.first?.urgency == .critical)
    }

    @Test("a thousand planted copies that fail to open are one critical notice naming five of them, not a thousand")
    func plantedCopiesCoalesce() {
        var planner = NoticePlanner(quietTime: 2, longestWait: 30)
        let start = Date(timeIntervalSince1970: 1_000_000)
        var sent: [DesktopNotice] = []
        for index in 0..<1_000 {
            let now = start.addingTimeInterval(Double(index) * 0.01)
            if let notice = planner.take(.conflictCopyLeft(vault: "/s/v.kdbx", copy: "/s/v.sync-conflict-\(index).kdbx", reason: .unreadable), at: now) {
                sent.append(notice)
            }
            sent += planner.due(at: now)
        }
        _ = planner.take(.conflictCopyMerged(vault: "/s/v.kdbx", copy: "/c", keptAs: "/k", changes: [], explanation: []), at: start.addingTimeInterval(10))
        sent += planner.due(at: start.addingTimeInterval(13))
        #expect(sent.count == 1, "\(sent.count) notices")
        #expect(sent.first?.summary == "v.kdbx: merged a conflict copy, 1000 not merged" && sent.first?.urgency == .critical, "\(sent)")
        #expect(sent.first?.body.hasSuffix("v.sync-conflict-4.kdbx and 995 more") == true, "\(sent)")
    }

    @Test("huge titles and 200,000 changes make a notice of bounded length; line breaks, controls and bidi overrides arrive escaped")
    func boundedAndInert() {
        var planner = NoticePlanner(quietTime: 2, longestWait: 30)
        let start = Date(timeIntervalSince1970: 1_000_000)
        let huge = (0..<5).map { String(repeating: Character(UnicodeScalar(UInt8(65 + $0))), count: 1_000_000) }
        var changes = huge.map { Change(.added, .entry, uuid: UUID(), path: "/" + $0, title: $0) }
        changes += (0..<200_000).map { Change(.added, .entry, uuid: UUID(), path: "/e\($0)", title: "e\($0)") }
        _ = planner.take(.conflictCopyMerged(vault: "/s/v\u{202E}txt.kdbx", copy: "/c", keptAs: "/k", changes: changes, explanation: []), at: start)
        _ = planner.take(.conflictCopyMerged(vault: "/s/v\u{202E}txt.kdbx", copy: "/c", keptAs: "/k",
                                             changes: [Change(.added, .entry, uuid: UUID(), path: "/Evil\nmypass-sync: all is well\u{9B}2J", title: "x")],
                                             explanation: []), at: start)
        let notice = planner.due(at: start.addingTimeInterval(3)).first
        #expect(notice != nil)
        guard let notice else { return }
        #expect(notice.body.count <= DesktopNotice.maximumBodyLength && notice.summary.count <= DesktopNotice.maximumSummaryLength)
        #expect(notice.body.hasPrefix("200006 changes: /AAAA") && notice.body.hasSuffix(" and 200001 more"), "\(notice.body.prefix(300))")
        #expect(notice.summary == "v\\u{202e}txt.kdbx: merged 2 conflict copies", "\(notice.summary)")
        let raw: Set<Unicode.Scalar> = ["\u{202E}", "\u{9B}", "\n"]
        #expect(!(notice.summary + notice.body).unicodeScalars.contains { raw.contains($0) })
    }

    @Test("generated bursts over several vaults: at most one notice per vault per burst, each bounded and inert", arguments: 0..<30)
    func generatedBursts(seed: UInt64) {
        var random = SeededRandom(seed: 0xB0A5 &+ seed)
        var planner = NoticePlanner(quietTime: 2, longestWait: 30)
        let vaults = ["/a/one.kdbx", "/b/two.kdbx", "/c/th\u{2028}ree.kdbx"]
        let hostile: [Unicode.Scalar] = ["\n", "\u{1B}", "\u{85}", "\u{9B}", "\u{2028}", "\u{202E}", "\u{2066}", "x", "y", "/"]
        var now = Date(timeIntervalSince1970: 2_000_000)
        var collectedSince: [String: Date] = [:]
        for _ in 0..<Int.random(in: 1...300, using: &random) {
            now += Double.random(in: 0...3, using: &random)
            let vault = vaults.randomElement(using: &random)!
            var name = String.UnicodeScalarView()
            for _ in 0..<Int.random(in: 1...200, using: &random) { name.append(hostile.randomElement(using: &random)!) }
            let event: WatchEvent = Bool.random(using: &random)
                ? .conflictCopyLeft(vault: vault, copy: "/s/" + String(name), reason: .unreadable)
                : .conflictCopyMerged(vault: vault, copy: "/c", keptAs: "/k", changes: [Change(.added, .entry, uuid: UUID(), path: "/" + String(name), title: "t")],
                                      explanation: [])
            #expect(planner.take(event, at: now) == nil, "seed \(seed): a copy was told at once")
            collectedSince[vault] = collectedSince[vault] ?? now
            for notice in planner.due(at: now) {
                #expect(notice.body.count <= DesktopNotice.maximumBodyLength && !notice.body.unicodeScalars.contains { $0 != "\n" && hostile.prefix(7).contains($0) },
                        "seed \(seed): \(notice.body.prefix(200))")
                // One line for the merged copies, one for those not merged: a name's line break never makes another.
                #expect(notice.body.split(separator: "\n", omittingEmptySubsequences: false).count <= 2, "seed \(seed): a forged line: \(notice.body.prefix(300))")
                #expect(!notice.summary.unicodeScalars.contains { hostile.prefix(7).contains($0) }, "seed \(seed)")
                #expect(collectedSince.removeValue(forKey: notice.vault) != nil, "seed \(seed): two notices for one burst of \(notice.vault)")
            }
        }
    }

    @Test("a burst that never goes quiet is sent after the longest wait")
    func longestWait() {
        var planner = NoticePlanner(quietTime: 2, longestWait: 5)
        let start = Date(timeIntervalSince1970: 1_000_000)
        for second in 0..<6 {
            _ = planner.take(.conflictCopyMerged(vault: "/v.kdbx", copy: "/c", keptAs: "/k", changes: [], explanation: []),
                             at: start.addingTimeInterval(Double(second)))
        }
        #expect(planner.due(at: start.addingTimeInterval(5)).first?.summary == "v.kdbx: merged 6 conflict copies")
    }

    @Test("control requests: anything but one well-formed JSON object within the size is refused")
    func requests() {
        #expect((try? ControlRequest.parse(Data(#"{"request": "status"}"#.utf8)).get()) == .status)
        for bad in ["", "null", "{}", #"{"request": "explode"}"#, #"{"request": "pause"}"#, #"{"request": "decide", "vault": "/v", "decision": "x"}"#,
                    String(repeating: " ", count: ControlRequest.maximumSize + 1)] {
            guard case .failure(let answer) = ControlRequest.parse(Data(bad.utf8)) else {
                Issue.record("accepted: \(bad.prefix(40))")
                continue
            }
            #expect(!answer.ok && answer.error != nil)
        }
    }
}

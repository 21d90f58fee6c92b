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
        #expect(planner.take(.decisionNeeded(vault: vault), at: start)?.actions == [.merge, .reload, .overwrite])
        #expect(planner.take(.baseRecorded(vault: vault), at: start) == nil)
        let refused = planner.take(.refused(vault: vault, reason: .rollback(olderEntries: 2)), at: start)
        #expect(refused?.summary == "personal.kdbx: a version was refused" && refused?.body.contains("older version") == true)
        let left = planner.take(.conflictCopyLeft(vault: vault, copy: "/s/personal.sync-conflict-x.kdbx", reason: .otherCredentials), at: start)
        #expect(left?.summary == "personal.kdbx: a conflict copy was not merged" && left?.body == "personal.sync-conflict-x.kdbx: otherCredentials")
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
        #expect((try? ControlRequest.parse(Data(#"{"request": "status"}"#.utf8)).get()) == ControlRequest(.status))
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

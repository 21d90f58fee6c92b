import Foundation
import MyPassCrypto
import Testing
import TestSupport

/// `unlock` / `lock` across separate processes, with the kernel keyring, real salt rotation by our
/// own saves and by keepassxc-cli.
@Suite("mypass-sync unlock and lock (end to end)")
struct QuickUnlockCommandTests {
    /// A copy of the KDBX 4 fixture in a scratch folder.
    private static func vault() throws -> (directory: URL, path: String) {
        let directory = try CLIFixtures.scratch()
        let path = directory.appendingPathComponent("quick.kdbx").path
        try FileManager.default.copyItem(atPath: CLIFixtures.kdbx4, toPath: path)
        return (directory, path)
    }

    private static let password = CLIFixtures.kdbx4Password

    /// `ls` with no credentials and nothing on standard input: opens only from a kept key.
    private static func listWithoutPassword(_ path: String) throws -> ToolRunner.Outcome {
        try ToolRunner.run(["ls", path, "-R"])
    }

    /// The KDF salt of a KDBX 4 file: the "S" item of the outer header's KDF parameters (field 11, a
    /// variant dictionary: version, then type, key length, key, value length, value, up to type 0).
    private static func salt(_ path: String) throws -> Data {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        func number(_ at: Int, _ count: Int) -> Int { (0..<count).reduce(0) { $0 | Int(bytes[at + $1]) << (8 * $1) } }
        var offset = 12
        while offset + 5 <= bytes.count, bytes[offset] != 0 {
            let (field, length) = (bytes[offset], number(offset + 1, 4))
            if field == 11 {
                var item = offset + 5 + 2
                while bytes[item] != 0 {
                    let keyLength = number(item + 1, 4)
                    let key = String(decoding: bytes[(item + 5)..<(item + 5 + keyLength)], as: UTF8.self)
                    let valueLength = number(item + 5 + keyLength, 4)
                    let value = item + 9 + keyLength
                    if key == "S" { return Data(bytes[value..<(value + valueLength)]) }
                    item = value + valueLength
                }
            }
            offset += 5 + length
        }
        throw CocoaError(.fileReadCorruptFile)
    }

    @Test("after unlock, commands that read need no password; a save keeps it working; lock ends it")
    func unlockReadLock() throws {
        let (directory, path) = try Self.vault()
        defer { try? FileManager.default.removeItem(at: directory); _ = try? ToolRunner.run(["lock", path]) }
        let before = try Self.listWithoutPassword(path)
        #expect(before.status == 2 && before.standardError.contains("no terminal"), "\(before.standardError)")

        let unlock = try ToolRunner.run(["unlock", path, "--password-stdin", "--for", "120"], input: Self.password + "\n")
        #expect(unlock.status == 0, "\(unlock.standardError)")
        #expect(unlock.standardOutput.contains("unlocked until"))
        let listed = try Self.listWithoutPassword(path)
        #expect(listed.status == 0, "\(listed.standardError)")
        #expect(!listed.standardOutput.isEmpty)
        for command in [["show", path, "/Internet/GitHub"], ["search", path, "git"], ["export", path, "--format", "json"]] {
            let outcome = try ToolRunner.run(command)
            #expect(outcome.status == 0, "\(command[0]): \(outcome.standardError)")
        }
        let status = try ToolRunner.run(["status", path, "--json"])
        let report = try JSONSerialization.jsonObject(with: Data(status.standardOutput.utf8)) as? [String: Any]
        #expect(report?["quickUnlockUntil"] is String, "\(status.standardOutput)")

        // A write asks for the password (it draws a new salt) and keeps the kept key in step.
        let saltBefore = try Self.salt(path)
        let add = try ToolRunner.run(["add", path, "Quick/Added", "--username", "q"], input: Self.password + "\n")
        #expect(add.status == 2, "a write without credentials must not use the kept key: \(add.standardError)")
        let added = try ToolRunner.run(["add", path, "Added while unlocked", "--password-stdin", "--username", "q"], input: Self.password + "\n")
        #expect(added.status == 0, "\(added.standardError)")
        #expect(try Self.salt(path) != saltBefore, "the save kept the KDF salt")
        let afterSave = try Self.listWithoutPassword(path)
        #expect(afterSave.status == 0, "\(afterSave.standardError)")
        #expect(afterSave.standardOutput.contains("Added while unlocked"))

        // Credentials given on the command win over the kept key.
        let wrong = try ToolRunner.run(["ls", path, "--password-stdin"], input: "not the password\n")
        #expect(wrong.status == 3, "\(wrong.standardError)")

        let lock = try ToolRunner.run(["lock", path])
        #expect(lock.status == 0 && lock.standardOutput.contains("locked"))
        let afterLock = try Self.listWithoutPassword(path)
        #expect(afterLock.status == 2, "\(afterLock.standardOutput)")
        let again = try ToolRunner.run(["lock", path])
        #expect(again.standardOutput.contains("was not unlocked"))
    }

    @Test("the kept key, unlocked in a login session with its own keyring: readable there, neither found nor read from another session of the same user, never in the user keyring, its description without the path; without a keyring of its own, unlock warns")
    func whoCanReadTheKey() throws {
        let (directory, path) = try Self.vault()
        defer { try? FileManager.default.removeItem(at: directory) }
        let resolved = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        let description = "mypass-sync:derived-key:" + SHA256.hexHash(Data(resolved.utf8)).prefix(16)
        // A login session with a keyring of its own (what pam_keyinit gives a login): unlock and
        // read there, then try from another session of the same user, as an SSH login or a service.
        let script = """
            "$0" unlock "$1" --password-stdin --for 120 >/dev/null 2>"$3/unlock.err" || echo unlock-failed
            "$0" ls "$1" </dev/null >/dev/null 2>&1 && echo read-here
            serial=$(keyctl search @s user "$2") && echo found-here
            keyctl pipe "$serial" >/dev/null 2>&1 && echo piped-here
            keyctl show @s | grep -F -q "$3" && echo path-shown
            keyctl session - keyctl search @us user "$2" >/dev/null 2>&1 && echo found-in-user-session
            keyctl session - keyctl search @u user "$2" >/dev/null 2>&1 && echo found-in-user-keyring
            keyctl session - keyctl pipe "$serial" >/dev/null 2>&1 && echo piped-elsewhere
            keyctl session - sh -c 'keyctl pipe %user:'"$2" >/dev/null 2>&1 && echo requested-elsewhere
            "$0" lock "$1" >/dev/null
            """
        let outcome = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/keyctl"),
                                            ["session", "-", "sh", "-c", script, try ToolRunner.binary().path, path, description, directory.path],
                                            input: Data((Self.password + "\n").utf8))
        let seen = Set(outcome.output.split(separator: "\n").map(String.init))
        #expect(seen == ["read-here", "found-here", "piped-here"], "\(outcome.output)")
        let warned = (try? String(contentsOf: directory.appendingPathComponent("unlock.err"), encoding: .utf8)) ?? ""
        #expect(!warned.contains("warning"), "a login with its own keyring got the warning: \(warned)")
        // Without a session keyring of its own (the user's default one): unlock says that every
        // process of the user can read the key.
        let shared = try ProcessRunner.run(URL(fileURLWithPath: "/bin/sh"), ["-c", #"keyctl describe @s | grep -q _uid_ses && "$0" unlock "$1" --password-stdin --for 60 && "$0" lock "$1""#,
                                                                              try ToolRunner.binary().path, path],
                                           input: Data((Self.password + "\n").utf8))
        if String(decoding: shared.standardOutput, as: UTF8.self).contains("unlocked until") {
            #expect(shared.standardError.contains("any process of this user can read the kept key"), "\(shared.standardError)")
        }
    }

    @Test("a save by keepassxc-cli (new salt) asks for the password once; the password then refreshes the kept key")
    func otherProgramRotatesTheSalt() throws {
        let (directory, path) = try Self.vault()
        defer { try? FileManager.default.removeItem(at: directory); _ = try? ToolRunner.run(["lock", path]) }
        let unlock = try ToolRunner.run(["unlock", path, "--password-stdin", "--for", "120"], input: Self.password + "\n")
        #expect(unlock.status == 0, "\(unlock.standardError)")
        let saltBefore = try Self.salt(path)
        let edit = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), ["keepassxc-cli", "add", "-q", "-u", "kx", path, "From KeePassXC"],
                                         input: Data((Self.password + "\n").utf8), environment: ["QT_QPA_PLATFORM": "offscreen"])
        #expect(edit.status == 0, "\(edit.standardError)")
        #expect(try Self.salt(path) != saltBefore, "keepassxc-cli kept the salt: this test would prove nothing")
        let stale = try Self.listWithoutPassword(path)
        #expect(stale.status == 2, "a key for the old salt opened the new version: \(stale.standardOutput)")
        let withPassword = try ToolRunner.run(["ls", path, "--password-stdin"], input: Self.password + "\n")
        #expect(withPassword.status == 0 && withPassword.standardOutput.contains("From KeePassXC"), "\(withPassword.standardError)")
        let refreshed = try Self.listWithoutPassword(path)
        #expect(refreshed.status == 0 && refreshed.standardOutput.contains("From KeePassXC"), "\(refreshed.standardError)")
    }

    @Test("the kept key expires; --for is checked")
    func expiry() throws {
        let (directory, path) = try Self.vault()
        defer { try? FileManager.default.removeItem(at: directory); _ = try? ToolRunner.run(["lock", path]) }
        for bad in ["0", "86401", "soon"] {
            let outcome = try ToolRunner.run(["unlock", path, "--password-stdin", "--for", bad], input: Self.password + "\n")
            #expect(outcome.status == 2, "--for \(bad)")
        }
        let unlock = try ToolRunner.run(["unlock", path, "--password-stdin", "--for", "1"], input: Self.password + "\n")
        #expect(unlock.status == 0, "\(unlock.standardError)")
        #expect(try Self.listWithoutPassword(path).status == 0)
        // The kernel drops the key once its second is up.
        try waitUntil("the quick-unlock key to expire", timeout: 15) { try Self.listWithoutPassword(path).status == 2 }
        #expect(try Self.listWithoutPassword(path).status == 2, "the key outlived --for")
        let status = try ToolRunner.run(["status", path])
        #expect(status.standardOutput.contains("quick unlock: off"), "\(status.standardOutput)")
    }
}

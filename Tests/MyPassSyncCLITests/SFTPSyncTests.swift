import Foundation
import Synchronization
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// `sync --remote sftp://…` against a real OpenSSH server (sshd + sftp-server) on 127.0.0.1.
@Suite("sync --remote: SFTP with a rename-based compare-and-swap (end to end)", .serialized)
struct SFTPSyncTests {
    @Test("two devices in turn, then three at the same time, converge with nothing lost; no temporary file stays; the server file is 0600")
    func twoDevicesConverge() throws {
        let server = try SFTPServer()
        defer { server.remove() }
        let (a, b) = (try server.device(), try server.device())
        defer { a.vault.remove(); b.vault.remove() }
        let first = try a.report()
        #expect(first["mode"] as? String == "rename" && first["uploaded"] as? Bool == true, "\(first)")
        #expect(server.stored("vault.kdbx") == (try a.vault.bytes()), "the server holds exactly the working copy")
        var expected = try RemoteDevice.editInTurns(a, b, rounds: 4)
        let afterTurns = try b.vault.pykeepass("No URL")
        #expect(afterTurns?.fields["Round"] == "4" && afterTurns?.username == "a-user-4", "after the turns: \(String(describing: afterTurns))")
        // Three devices edit and sync in loops at the same time (whether a round races depends on
        // timing; nothing may be lost either way).
        let c = try server.device()
        defer { c.vault.remove() }
        _ = try c.report()
        let devices = [a, b, c]
        let attempts = Mutex([Int]())
        DispatchQueue.concurrentPerform(iterations: devices.count) { index in
            for round in 1...5 {
                let outcome = try? devices[index].vault.run(["add", devices[index].vault.vault, "/Together-\(index)-\(round)"])
                #expect(outcome?.status == 0)
                guard let synced = try? devices[index].sync() else { continue }
                #expect(synced.status == 0, "\(synced.standardError)")
                let report = (try? JSONSerialization.jsonObject(with: Data(synced.standardOutput.utf8)) as? [String: Any]) ?? [:]
                attempts.withLock { $0.append(report["attempts"] as? Int ?? 0) }
            }
        }
        expected.formUnion((0..<3).flatMap { index in (1...5).map { "Together-\(index)-\($0)" } })
        print("SFTP concurrent syncs, rounds each took: \(attempts.withLock { $0 })")
        _ = try c.report()
        _ = try a.report()
        _ = try b.report()
        _ = try a.report()
        #expect(try a.titles() == expected && (try b.titles()) == expected)
        let entry = try b.vault.pykeepass("No URL")
        #expect(entry?.fields["Round"] == "4" && entry?.username == "a-user-4", "\(String(describing: entry))")
        let quiet = try a.report()
        #expect(quiet["uploaded"] as? Bool == false && quiet["remoteChanged"] as? Bool == false, "\(quiet)")
        let view = try ReferenceTools.view(.pykeepass, path: server.root.appendingPathComponent("vault.kdbx"), password: ScratchVault.password, keyFile: nil)
        #expect(Set(view.entries.filter { !$0.inRecycleBin }.map(\.title)) == expected)
        #expect(server.names() == ["vault.kdbx"], "temporary, aside and probe files are gone: \(server.names())")
        let mode = (try FileManager.default.attributesOfItem(atPath: server.root.appendingPathComponent("vault.kdbx").path)[.posixPermissions] as? Int) ?? 0
        #expect(mode == 0o600, "mode \(String(mode, radix: 8))")
    }

    @Test("another device's write between our fetch and our replace: the moved-aside vault differs, is put back, merged; both kept")
    func lostRaceMerges() throws {
        let server = try SFTPServer()
        defer { server.remove() }
        let (a, b) = try RemoteDevice.divergedPair(server.device)
        defer { a.vault.remove(); b.vault.remove() }
        let (syncing, hook) = try a.startPaused(at: "MYPASS_SYNC_BEFORE_UPLOAD")
        #expect(try b.report()["uploaded"] as? Bool == true, "B writes in A's window")
        let written = server.stored("vault.kdbx")
        FileManager.default.createFile(atPath: hook + ".go", contents: Data())
        let (status, text, errors) = syncing.finish()
        #expect(status == 0, "\(errors)")
        let report = (try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]) ?? [:]
        #expect(report["attempts"] as? Int == 2, "\(text)")
        #expect(server.stored("vault.kdbx") != written, "A's second round replaced B's version with the merge")
        _ = try b.report()
        #expect(try a.titles().isSuperset(of: ["From A", "From B"]) && (try b.titles()).isSuperset(of: ["From A", "From B"]))
        #expect(server.names() == ["vault.kdbx"], "\(server.names())")
    }

    @Test("killed between renaming the vault aside and renaming the upload in: the next sync (of any device) puts it back; nothing lost")
    func crashMidReplaceRecovers() throws {
        let server = try SFTPServer()
        defer { server.remove() }
        let (a, b) = try RemoteDevice.divergedPair(server.device)
        defer { a.vault.remove(); b.vault.remove() }
        let (syncing, _) = try a.startPaused(at: "MYPASS_SYNC_BEFORE_RENAME_IN")
        #expect(server.stored("vault.kdbx") == nil, "the vault is aside: \(server.names())")
        #expect(server.names().contains { $0.hasSuffix(".replaced") } && server.names().contains { $0.hasSuffix(".upload") }, "\(server.names())")
        kill(syncing.process.processIdentifier, SIGKILL)
        _ = syncing.finish()
        let recovered = try b.report()
        #expect(recovered["remoteChanged"] as? Bool == false && recovered["uploaded"] as? Bool == true,
                "B found the agreed version back in place and uploaded its edit: \(recovered)")
        _ = try a.report()
        _ = try b.report()
        #expect(try a.titles().isSuperset(of: ["From A", "From B"]) && (try b.titles()) == (try a.titles()))
        #expect(server.names() == ["vault.kdbx"], "\(server.names())")
    }

    @Test("unknown or changed host key: refused (exit 6) with the fingerprint; a key the server does not take, a stopped server: exit 7, nothing changed")
    func refusals() throws {
        let server = try SFTPServer()
        defer { server.remove() }
        let a = try server.device()
        defer { a.vault.remove() }
        let before = try a.vault.bytes()
        let empty = a.vault.directory.appendingPathComponent("known_hosts_empty").path
        FileManager.default.createFile(atPath: empty, contents: Data())
        let unknown = try a.vault.run(["sync", a.vault.vault, "--remote", server.url("vault.kdbx"), "--identity", server.identity, "--known-hosts", empty])
        #expect(unknown.status == 6 && unknown.standardError.contains("not known (\(server.fingerprint))"), "\(unknown.standardError)")
        let other = a.vault.directory.appendingPathComponent("other_ed25519").path
        #expect(try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/ssh-keygen"), ["-q", "-t", "ed25519", "-N", "", "-f", other]).status == 0)
        let impostor = a.vault.directory.appendingPathComponent("known_hosts_other").path
        try "[127.0.0.1]:\(server.port) \(try String(contentsOfFile: other + ".pub", encoding: .utf8))".write(toFile: impostor, atomically: true, encoding: .utf8)
        let changed = try a.vault.run(["sync", a.vault.vault, "--remote", server.url("vault.kdbx"), "--identity", server.identity, "--known-hosts", impostor])
        #expect(changed.status == 6 && changed.standardError.contains("NOT the one") && changed.standardError.contains(server.fingerprint),
                "\(changed.standardError)")
        let stranger = try a.vault.run(["sync", a.vault.vault, "--remote", server.url("vault.kdbx"), "--identity", other, "--known-hosts", server.knownHosts])
        #expect(stranger.status == 7 && stranger.standardError.contains("refused the login"), "\(stranger.standardError)")
        let noFolder = try a.vault.run(["sync", a.vault.vault, "--remote", server.url("no-such-folder/vault.kdbx"),
                                        "--identity", server.identity, "--known-hosts", server.knownHosts])
        #expect(noFolder.status == 7 && noFolder.standardError.contains("no such file or folder"), "\(noFolder.standardError)")
        let password = try a.vault.run(["sync", a.vault.vault, "--remote", "sftp://me:ssh-s3cret@127.0.0.1/vault.kdbx"])
        #expect(password.status == 2 && !password.standardError.contains("ssh-s3cret"), "\(password.standardError)")
        #expect(server.names().isEmpty, "nothing was written: \(server.names())")
        #expect(try a.vault.bytes() == before)
        _ = try a.report()
        #expect(try a.vault.run(["add", a.vault.vault, "/Offline edit"]).status == 0)
        let edited = try a.vault.bytes()
        let onServer = server.stored("vault.kdbx")
        server.stop()
        let down = try a.sync()
        #expect(down.status == 7 && down.standardError.contains("not reached"), "\(down.standardError)")
        #expect(try a.vault.bytes() == edited && server.stored("vault.kdbx") == onServer)
    }
}

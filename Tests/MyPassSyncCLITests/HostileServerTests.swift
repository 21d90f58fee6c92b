import Foundation
import Testing
import TestSupport

/// A server that attacks the client (a KDF bomb, an endless body, a drip, a PUT that stores nothing)
/// and option files that are not files: each refused quickly, nothing written anywhere.
@Suite("A hostile server and option files that are not files", .serialized)
struct HostileServerTests {
    /// A device whose working copy is the scratch vault, syncing with vault.kdbx on `server`.
    static func device(_ server: WebDAVServer) throws -> RemoteDevice { try server.device() }

    /// `mypass-sync sync` of `device` under Helpers/measure.py: exit status, wall time, peak memory.
    static func measuredSync(_ device: RemoteDevice, _ extra: [String] = []) throws -> HostileInputCLITests.Measured {
        try ToolRunner.helperReport("measure.py", [], ["sync", device.vault.vault, "--remote", device.url] + device.options + extra
                                    + ["--password-stdin", "--state-dir", device.vault.stateDirectory], input: ScratchVault.password + "\n")
    }

    /// The requests the hostile server received ("METHOD /path" lines).
    static func requests(_ server: WebDAVServer) -> [String] {
        ((try? String(contentsOf: server.directory.appendingPathComponent("requests.log"), encoding: .utf8)) ?? "")
            .split(separator: "\n").map(String.init)
    }

    @Test("the server's version with a KDF far costlier than the vault's own (Argon2 2 GiB x 10,000, within the open caps): refused before any derivation, exit 6, nothing written")
    func kdfBomb() throws {
        let server = try WebDAVServer(.hostile(mode: "normal"))
        defer { server.remove() }
        let device = try Self.device(server)
        defer { device.vault.remove() }
        let before = try device.vault.bytes()
        try KDFBomb.made(from: before).write(to: server.root.appendingPathComponent("vault.kdbx"))
        let served = server.stored("vault.kdbx")
        let run = try Self.measuredSync(device)
        #expect(run.status == 6, "\(run.stderr)")
        #expect(run.stderr.contains("far costlier than this vault's own"), "\(run.stderr)")
        #expect(run.seconds < 5, "derived for \(run.seconds) s")
        #expect(try device.vault.bytes() == before)
        #expect(server.stored("vault.kdbx") == served)
    }

    @Test("a body of 3 GiB, announced or chunked: stopped at the vault's download limit (exit 6), memory bounded, nothing written",
          arguments: ["announced", "chunked"])
    func endlessBody(mode: String) throws {
        let server = try WebDAVServer(.hostile(mode: mode))
        defer { server.remove() }
        let device = try Self.device(server)
        defer { device.vault.remove() }
        let before = try device.vault.bytes()
        try before.write(to: server.root.appendingPathComponent("vault.kdbx"))
        let run = try Self.measuredSync(device)
        #expect(run.status == 6, "\(run.stderr)")
        #expect(run.stderr.contains("the server sent more than"), "\(run.stderr)")
        // The limit is 16 MiB for this small vault: far below the 4 GiB any open allows.
        #expect(run.maxRSSKB < 150_000, "peaked at \(run.maxRSSKB) KiB")
        #expect(run.seconds < 20, "\(run.seconds) s")
        #expect(try device.vault.bytes() == before)
    }

    @Test("a server that drips a byte every 5 s is given up on at the low-speed limit (exit 7, 'stopped sending'); sync --watch in such a request ends on SIGTERM within seconds")
    func drip() throws {
        let server = try WebDAVServer(.hostile(mode: "drip"))
        defer { server.remove() }
        let device = try Self.device(server)
        defer { device.vault.remove() }
        try device.vault.bytes().write(to: server.root.appendingPathComponent("vault.kdbx"))
        let started = Date()
        let outcome = try device.sync([], environment: ["MYPASS_SYNC_LOW_SPEED_SECONDS": "3"])
        #expect(outcome.status == 7, "\(outcome.standardError)")
        #expect(outcome.standardError.contains("stopped sending"), "\(outcome.standardError)")
        #expect(Date().timeIntervalSince(started) < 30)

        try Data().write(to: server.directory.appendingPathComponent("requests.log"))
        let running = try device.start(["--watch"])
        // Wait until the GET of the vault is under way, then ask it to stop.
        waitUntil("the GET of the vault", timeout: 20) { Self.requests(server).contains { $0.hasPrefix("GET /vault.kdbx") } }
        let asked = Date()
        kill(running.process.processIdentifier, SIGTERM)
        let finished = running.finish()
        #expect(Date().timeIntervalSince(asked) < 5, "sync --watch took \(Date().timeIntervalSince(asked)) s to stop: \(finished.errors)")
        #expect(finished.status == 0, "\(finished.errors)")
    }

    @Test("sync --dry-run sends no PUT, DELETE or LOCK: the server check waits for the first sync that writes")
    func dryRunWritesNothing() throws {
        let server = try WebDAVServer(.hostile(mode: "normal"))
        defer { server.remove() }
        let device = try Self.device(server)
        defer { device.vault.remove() }
        for _ in 0..<2 {
            let outcome = try device.sync(["--dry-run"])
            #expect(outcome.status == 0, "\(outcome.standardError)")
        }
        let written = Self.requests(server).filter { !$0.hasPrefix("GET") && !$0.hasPrefix("HEAD") && !$0.hasPrefix("OPTIONS") }
        #expect(written.isEmpty, "a dry run sent \(written)")
        #expect(Self.requests(server).contains { $0.hasPrefix("GET /vault.kdbx") }, "the dry run did not even look")
        #expect(try device.report()["uploaded"] as? Bool == true)
        #expect(Self.requests(server).contains { $0.hasPrefix("PUT /vault.kdbx") })
    }

    @Test("a server that answers a PUT with success but stores nothing: named as such (exit 6), not 'another writer'")
    func putNotStored() throws {
        let server = try WebDAVServer(.hostile(mode: "forgetful"))
        defer { server.remove() }
        let device = try Self.device(server)
        defer { device.vault.remove() }
        let outcome = try device.sync()
        #expect(outcome.status == 6, "\(outcome.standardError)")
        #expect(outcome.standardError.contains("did not store"), "\(outcome.standardError)")
        #expect(!outcome.standardError.contains("another writer"), "\(outcome.standardError)")
    }

    @Test("--netrc-file, --identity and --known-hosts that name a FIFO, a device or a directory: refused at once (exit 7)",
          arguments: ["--netrc-file", "--identity", "--known-hosts"])
    func optionFilesThatAreNotFiles(option: String) throws {
        let device = try RemoteDevice(option == "--netrc-file" ? "http://127.0.0.1:9/vault.kdbx" : "sftp://127.0.0.1:9/vault.kdbx", [])
        defer { device.vault.remove() }
        let fifo = device.vault.directory.appendingPathComponent("fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        for path in [fifo, "/dev/zero", "/tmp"] {
            let started = Date()
            let outcome = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/timeout"),
                                                ["10", try ToolRunner.binary().path, "sync", device.vault.vault, "--remote", device.url, option, path,
                                                 "--password-stdin", "--state-dir", device.vault.stateDirectory],
                                                input: Data((ScratchVault.password + "\n").utf8))
            #expect(outcome.status == 7, "\(option) \(path): \(outcome.standardError)")
            #expect(outcome.standardError.contains("not a regular file"), "\(option) \(path): \(outcome.standardError)")
            #expect(Date().timeIntervalSince(started) < 3)
        }
    }
}

import Foundation
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A real OpenSSH server for one test (Debian's openssh-server: `sshd -f` with its own config, and
/// OpenSSH's sftp-server as the SFTP subsystem) on a free port of 127.0.0.1. Its host key and the
/// user's key are generated per test; only that key logs in, as the user running the tests.
final class SFTPServer {
    let port: Int
    let directory: URL
    /// Where the served files are (an absolute path on this machine, as the URL names it).
    let root: URL
    /// The user's private key (`--identity`).
    let identity: String
    /// A known-hosts file that holds the server's key (`--known-hosts`).
    let knownHosts: String
    /// The server's host key as OpenSSH prints it (`SHA256:…`).
    let fingerprint: String
    /// sshd, started with no signal blocked and under a supervising parent (Tests/TestSupport/Helpers/unblocked.py): SIGTERM
    /// ends it, and its closing every inherited descriptor is not mistaken for its end.
    private let process = Process()

    init() throws {
        directory = try CLIFixtures.scratch()
        root = directory.appendingPathComponent("files")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        port = try LoopbackPort.free()
        let hostKey = directory.appendingPathComponent("host_ed25519").path
        identity = directory.appendingPathComponent("user_ed25519").path
        for key in [hostKey, identity] { try Self.tool("/usr/bin/ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "", "-f", key]) }
        let hostPublic = try String(contentsOfFile: hostKey + ".pub", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let listed = try Self.tool("/usr/bin/ssh-keygen", ["-l", "-E", "sha256", "-f", hostKey + ".pub"])
        fingerprint = String(listed.split(separator: " ")[1])
        knownHosts = directory.appendingPathComponent("known_hosts").path
        try "[127.0.0.1]:\(port) \(hostPublic)\n".write(toFile: knownHosts, atomically: true, encoding: .utf8)
        let authorized = directory.appendingPathComponent("authorized_keys").path
        try FileManager.default.copyItem(atPath: identity + ".pub", toPath: authorized)
        let config = directory.appendingPathComponent("sshd_config").path
        try ["Port \(port)", "ListenAddress 127.0.0.1", "HostKey \(hostKey)", "PidFile \(directory.path)/sshd.pid",
             "AuthorizedKeysFile \(authorized)", "StrictModes no", "PasswordAuthentication no", "KbdInteractiveAuthentication no",
             "UsePAM no", "PermitRootLogin prohibit-password", "Subsystem sftp /usr/lib/openssh/sftp-server"]
            .joined(separator: "\n").write(toFile: config, atomically: true, encoding: .utf8)
        if getuid() == 0 {
            // sshd running as root wants its privilege-separation directory (the Debian service makes it at boot).
            try FileManager.default.createDirectory(atPath: "/run/sshd", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        }
        let log = directory.appendingPathComponent("sshd.log").path
        FileManager.default.createFile(atPath: log, contents: nil)
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        process.standardError = FileHandle(forWritingAtPath: log)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", unblockedHelper, "--supervise", "/usr/sbin/sshd", "-D", "-e", "-f", config]
        try process.run()
        guard LoopbackPort.waitUntilListening(port, while: { process.isRunning }) else {
            throw WebDAVServer.Failure.setup("sshd did not start: " + ((try? String(contentsOfFile: log, encoding: .utf8)) ?? ""))
        }
    }

    deinit { stop() }

    /// The URL of `name` on the server.
    func url(_ name: String) -> String { "sftp://127.0.0.1:\(port)\(root.path)/\(name)" }

    /// A device syncing with vault.kdbx on this server (the generated key, the server's key known).
    func device() throws -> RemoteDevice { try RemoteDevice(url("vault.kdbx"), ["--identity", identity, "--known-hosts", knownHosts]) }

    /// The bytes of `name` on the server's disk.
    func stored(_ name: String) -> Data? { try? Data(contentsOf: root.appendingPathComponent(name)) }

    /// The names in the served folder.
    func names() -> [String] { (try? FileManager.default.contentsOfDirectory(atPath: root.path))?.sorted() ?? [] }

    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }

    func remove() {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    @discardableResult
    private static func tool(_ path: String, _ arguments: [String]) throws -> String {
        let outcome = try ProcessRunner.run(URL(fileURLWithPath: path), arguments)
        guard outcome.status == 0 else { throw WebDAVServer.Failure.setup("\(path): \(outcome.standardError)") }
        return String(decoding: outcome.standardOutput, as: UTF8.self)
    }
}

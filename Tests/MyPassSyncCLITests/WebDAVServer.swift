import Foundation
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A real WebDAV server for one test, on a free port of 127.0.0.1, serving a fresh directory with
/// basic authentication (user `alice`, credentials in a netrc file the tests pass with --netrc-file).
final class WebDAVServer {
    enum Kind: CustomStringConvertible, Sendable, Equatable {
        /// Apache 2 with mod_dav and mod_dav_fs (Debian's apache2), its own config.
        case apache
        /// wsgidav (PyPI) on cheroot.
        case wsgidav
        /// A plain file server that ignores If-Match and has no locks (Helpers/naive_dav.py).
        case naive
        /// The same server answering every PUT with one status (404, 507): what no real server here can be made to do.
        case refusingPuts(status: Int)
        /// A server that honours preconditions but makes the vault's GET or PUT hostile
        /// (Helpers/hostile_dav.py: `chunked`, `announced`, `drip`, `forgetful`, `normal`).
        case hostile(mode: String)
        var description: String { "\(self)" }
    }

    let kind: Kind
    let port: Int
    let directory: URL
    /// Where the served files are.
    let root: URL
    /// A netrc file with alice's credentials for 127.0.0.1.
    let netrc: String
    /// The server, started with no signal blocked (Tests/TestSupport/Helpers/unblocked.py) so that SIGTERM ends it.
    private let process: Process

    static let user = "alice"
    static let password = "dav-pässword-1"

    init(_ kind: Kind) throws {
        self.kind = kind
        directory = try CLIFixtures.scratch()
        root = directory.appendingPathComponent("dav")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        port = try LoopbackPort.free()
        netrc = directory.appendingPathComponent("netrc").path
        try "machine 127.0.0.1 login \(Self.user) password \(Self.password)\n".write(toFile: netrc, atomically: true, encoding: .utf8)
        chmod(netrc, 0o600)
        process = Process()
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        let log = directory.appendingPathComponent("server.log").path
        FileManager.default.createFile(atPath: log, contents: nil)
        process.standardError = FileHandle(forWritingAtPath: log)
        switch kind {
        case .apache: try configureApache()
        case .wsgidav: try configureWsgidav()
        case .hostile(let mode):
            let helper = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Helpers/hostile_dav.py").path
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["python3", unblockedHelper, "python3", helper, "\(port)", root.path, mode]
        case .naive, .refusingPuts:
            let helper = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Helpers/naive_dav.py").path
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            let status = if case .refusingPuts(let status) = kind { ["\(status)"] } else { [String]() }
            process.arguments = ["python3", unblockedHelper, "python3", helper, "\(port)", root.path] + status
        }
        try process.run()
        try waitUntilListening()
    }

    deinit { stop() }

    /// The URL of `name` on the server.
    func url(_ name: String) -> String { "http://127.0.0.1:\(port)/\(name)" }

    /// A device syncing with vault.kdbx on this server (alice's credentials in the netrc file).
    func device() throws -> RemoteDevice { try RemoteDevice(url("vault.kdbx"), ["--netrc-file", netrc]) }

    /// The bytes of `name` on the server's disk.
    func stored(_ name: String) -> Data? { try? Data(contentsOf: root.appendingPathComponent(name)) }

    func stop() {
        if process.isRunning {
            if kind == .apache, let pid = try? String(contentsOf: directory.appendingPathComponent("httpd.pid"), encoding: .utf8),
               let number = Int32(pid.trimmingCharacters(in: .whitespacesAndNewlines)) {
                kill(number, SIGTERM)
            }
            process.terminate()
            process.waitUntilExit()
        }
    }

    func remove() {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    private func configureApache() throws {
        let modules = "/usr/lib/apache2/modules"
        let passwords = directory.appendingPathComponent("htpasswd").path
        let made = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/htpasswd"), ["-b", "-c", passwords, Self.user, Self.password])
        guard made.status == 0 else { throw Failure.setup("htpasswd: \(made.standardError)") }
        var lines = ["ServerRoot \(directory.path)", "Listen 127.0.0.1:\(port)", "PidFile \(directory.path)/httpd.pid",
                     "ErrorLog \(directory.path)/error.log", "ServerName 127.0.0.1", "DocumentRoot \(root.path)",
                     "DavLockDB \(directory.path)/locks/davlock", "Mutex file:\(directory.path)"]
        for module in ["mpm_event", "authz_core", "authn_core", "authn_file", "authz_user", "auth_basic", "dav", "dav_fs", "dav_lock"] {
            lines.append("LoadModule \(module)_module \(modules)/mod_\(module).so")
        }
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("locks"), withIntermediateDirectories: true)
        if getuid() == 0 {
            // Apache will not serve as root: its workers run as nobody, who must write the served files and the lock database.
            lines += ["User nobody", "Group nogroup"]
            for path in [root.path, directory.appendingPathComponent("locks").path] { chown(path, 65534, 65534) }
            chmod(directory.path, 0o755)
        }
        lines += ["<Directory \(root.path)>", "  Dav On", "  AuthType Basic", "  AuthName dav", "  AuthUserFile \(passwords)",
                  "  Require valid-user", "</Directory>",
                  // A read-only share: alice may read but not write there (403 on PUT).
                  "<Directory \(root.path)/readonly>", "  <LimitExcept GET HEAD OPTIONS PROPFIND>", "    Require all denied",
                  "  </LimitExcept>", "</Directory>"]
        try FileManager.default.createDirectory(at: root.appendingPathComponent("readonly"), withIntermediateDirectories: true)
        if getuid() == 0 { chown(root.appendingPathComponent("readonly").path, 65534, 65534) }
        let config = directory.appendingPathComponent("httpd.conf").path
        try lines.joined(separator: "\n").write(toFile: config, atomically: true, encoding: .utf8)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", unblockedHelper, "/usr/sbin/apache2", "-f", config, "-DFOREGROUND"]
    }

    private func configureWsgidav() throws {
        let config = """
            host: 127.0.0.1
            port: \(port)
            provider_mapping:
              "/": "\(root.path)"
            http_authenticator:
              domain_controller: null
              accept_basic: true
              accept_digest: false
              default_to_digest: false
            simple_dc:
              user_mapping:
                "*":
                  "\(Self.user)":
                    password: "\(Self.password)"
            lock_storage: true
            verbose: 0
            """
        let path = directory.appendingPathComponent("wsgidav.yaml").path
        try config.write(toFile: path, atomically: true, encoding: .utf8)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", unblockedHelper, "python3", "-m", "wsgidav.server.server_cli", "--config", path]
    }

    enum Failure: Error { case setup(String) }

    private func waitUntilListening() throws {
        if LoopbackPort.waitUntilListening(port, while: { process.isRunning }) { return }
        let log = (try? String(contentsOf: directory.appendingPathComponent("server.log"), encoding: .utf8)) ?? ""
        let errors = (try? String(contentsOf: directory.appendingPathComponent("error.log"), encoding: .utf8)) ?? ""
        throw Failure.setup("\(kind) did not start: \(log) \(errors)")
    }
}

import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A stand-in daemon of another user (`Helpers/impostor_daemon.py`): answers every request with
/// success and logs what it was sent.
private final class ImpostorDaemon {
    /// When the impostor becomes the other user: before it makes the socket (its folder and socket
    /// are theirs), or after binding and before listening (the socket is in the caller's folder, the
    /// process answering is theirs).
    enum Takeover: String { case beforeBind = "drop-before-bind", beforeListen = "drop-before-listen" }

    private let process = Process()
    private let log: String

    init(socket: String, as user: OtherUser, takeover: Takeover, log: String) throws {
        self.log = log
        let helper = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Helpers/impostor_daemon.py").path
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [helper, socket, log, String(user.userID), takeover.rawValue]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        #expect(eventually(within: 15) { logText.contains("listening") }, "the impostor did not come up")
    }

    deinit {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    private var logText: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

    /// The requests it received.
    var requests: [String] { logText.split(separator: "\n").filter { $0.hasPrefix("request: ") }.map(String.init) }
}

/// `mypass-sync ARGUMENTS` in `directory` with `environment`, given `seconds` to end (a daemon that
/// serves is killed then): its exit status (nil: it was still running) and standard error.
private func runBounded(_ arguments: [String], environment: [String: String], in directory: URL,
                        within seconds: TimeInterval = 20) throws -> (status: Int32?, standardError: String) {
    let errors = directory.appendingPathComponent("stderr-\(UUID().uuidString)")
    _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
    let process = Process()
    process.executableURL = try ToolRunner.binary()
    process.arguments = arguments
    process.currentDirectoryURL = directory
    process.environment = ProcessInfo.processInfo.environment.merging(["XDG_STATE_HOME": ToolRunner.stateHome]) { $1 }
        .merging(environment) { $1 }
        .merging(["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/bus"]) { $1 }
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = FileHandle.nullDevice
    process.standardError = try FileHandle(forWritingTo: errors)
    try process.run()
    let ended = eventually(within: seconds) { !process.isRunning }
    if !ended {
        kill(process.processIdentifier, SIGKILL)
    }
    process.waitUntilExit()
    return (ended ? process.terminationStatus : nil, (try? String(contentsOf: errors, encoding: .utf8)) ?? "")
}

@Suite("daemon control socket: clients and the daemon trust only this user's runtime folder and daemon", .serialized)
struct DaemonSocketTrustTests {
    @Test("a client in a runtime folder another user controls sends nothing to that user's daemon (exit 6)",
          .enabled(if: getuid() == 0, "the other user is made with useradd"))
    func clientRefusesAnotherUsersRuntimeFolder() throws {
        let home = try DaemonHome()
        defer { try? FileManager.default.removeItem(at: home.root) }
        let user = try OtherUser()
        #expect(chmod(home.root.path, 0o755) == 0)
        try user.folder(home.root.appendingPathComponent("run").path, mode: 0o700)
        let impostor = try ImpostorDaemon(socket: home.socket, as: user, takeover: .beforeBind,
                                          log: home.root.appendingPathComponent("impostor.log").path)
        let vault = home.sync.appendingPathComponent("personal.kdbx").path
        for arguments in [["daemon", "pause", vault], ["daemon", "decide", vault, "merge"], ["daemon", "status"]] {
            let outcome = try home.tool(arguments)
            #expect(outcome.status == 6, "\(arguments): \(outcome.status) \(outcome.standardOutput) \(outcome.standardError)")
            #expect(outcome.standardError.contains("belongs to user \(user.userID)"), "\(outcome.standardError)")
            #expect(!outcome.standardOutput.contains("impostor"), "the impostor's answer was printed: \(outcome.standardOutput)")
        }
        #expect(impostor.requests.isEmpty, "another user's socket received: \(impostor.requests)")
    }

    @Test("a client whose socket is answered by a process of another user sends nothing (SO_PEERCRED; exit 6)",
          .enabled(if: getuid() == 0, "the other user is made with useradd"))
    func clientRefusesAnotherUsersPeer() throws {
        let home = try DaemonHome()
        defer { try? FileManager.default.removeItem(at: home.root) }
        let user = try OtherUser()
        let impostor = try ImpostorDaemon(socket: home.socket, as: user, takeover: .beforeListen,
                                          log: home.root.appendingPathComponent("impostor.log").path)
        let vault = home.sync.appendingPathComponent("personal.kdbx").path
        for arguments in [["daemon", "resume", vault], ["daemon", "decide", vault, "overwrite"], ["daemon", "status"]] {
            let outcome = try home.tool(arguments)
            #expect(outcome.status == 6, "\(arguments): \(outcome.status) \(outcome.standardOutput) \(outcome.standardError)")
            #expect(outcome.standardError.contains("runs as user \(user.userID)"), "\(outcome.standardError)")
            #expect(!outcome.standardOutput.contains("impostor"), "the impostor's answer was printed: \(outcome.standardOutput)")
        }
        #expect(impostor.requests.isEmpty, "another user's process received: \(impostor.requests)")
    }

    @Test("`daemon run` refuses a runtime folder another user owns (0777) and one of its own that others may write (exit 6, no socket)",
          .enabled(if: getuid() == 0, "the other user is made with useradd"))
    func daemonRefusesUnsafeRuntimeFolder() throws {
        let user = try OtherUser()
        let othersFolder = try DaemonHome()
        defer { try? FileManager.default.removeItem(at: othersFolder.root) }
        try user.folder(othersFolder.root.appendingPathComponent("run").path, mode: 0o777)
        let refused = try runBounded(["daemon", "run"], environment: othersFolder.environment, in: othersFolder.root)
        #expect(refused.status == 6, "served from another user's runtime folder: \(refused.standardError)")
        #expect(refused.standardError.contains("belongs to user \(user.userID)"), "\(refused.standardError)")
        #expect(!FileManager.default.fileExists(atPath: othersFolder.socket))

        let openFolder = try DaemonHome()
        defer { try? FileManager.default.removeItem(at: openFolder.root) }
        #expect(chmod(openFolder.root.appendingPathComponent("run").path, 0o777) == 0)
        let open = try runBounded(["daemon", "run"], environment: openFolder.environment, in: openFolder.root)
        #expect(open.status == 6, "served from a runtime folder others may write: \(open.standardError)")
        #expect(open.standardError.contains("may be written by other users"), "\(open.standardError)")
        #expect(!FileManager.default.fileExists(atPath: openFolder.socket))
    }

    @Test("a relative XDG_RUNTIME_DIR is refused by the daemon and by a client (exit 2), even where it names a folder")
    func relativeRuntimeDirectoryRefused() throws {
        let home = try DaemonHome()
        defer { try? FileManager.default.removeItem(at: home.root) }
        let environment = home.environment.merging(["XDG_RUNTIME_DIR": "run"]) { $1 }
        let daemon = try runBounded(["daemon", "run"], environment: environment, in: home.root)
        #expect(daemon.status == 2, "the daemon took a relative XDG_RUNTIME_DIR: \(daemon.standardError)")
        #expect(daemon.standardError.contains("not an absolute path"), "\(daemon.standardError)")
        #expect(!FileManager.default.fileExists(atPath: home.socket))
        let client = try runBounded(["daemon", "status"], environment: environment, in: home.root)
        #expect(client.status == 2 && client.standardError.contains("not an absolute path"), "\(client.standardError)")
    }
}

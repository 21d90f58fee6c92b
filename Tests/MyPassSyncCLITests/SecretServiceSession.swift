import Foundation
import Testing
import TestSupport

/// A real Secret Service for one test: a private D-Bus session bus (`dbus-daemon --session`) and
/// `gnome-keyring-daemon` on it, its login keyring unlocked with a test password, in a scratch home.
/// Commands run with `environment` reach it and nothing else; `stop()` ends both daemons.
final class SecretServiceSession {
    let home: URL
    let environment: [String: String]
    private let busPID: pid_t

    struct Failure: Error, CustomStringConvertible { let description: String }

    init() throws {
        home = try CLIFixtures.scratch()
        let runtime = home.appendingPathComponent("run")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        // Through a helper that hands the daemons no descriptor of this process: a runner waits for
        // every writer of the output to close it, and a daemon keeps what it inherited.
        let helper = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Helpers/start_daemon.py").path
        let started = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"),
                                            ["python3", helper, "dbus-daemon", "--session", "--fork", "--print-address=1", "--print-pid=1", "--nopidfile"])
        let lines = String(decoding: started.standardOutput, as: UTF8.self).split(separator: "\n").map(String.init)
        guard started.status == 0, lines.count >= 2, let pid = pid_t(lines[1]) else {
            throw Failure(description: "dbus-daemon did not start: \(started.standardError)")
        }
        busPID = pid
        environment = ["DBUS_SESSION_BUS_ADDRESS": lines[0], "HOME": home.path, "XDG_RUNTIME_DIR": runtime.path,
                       "XDG_DATA_HOME": home.appendingPathComponent("data").path, "DISPLAY": ""]
        let keyring = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"),
                                            ["python3", helper, "gnome-keyring-daemon", "--unlock", "--components=secrets"],
                                            input: Data("keyring-test-pässword".utf8), environment: environment)
        guard keyring.status == 0 else { throw Failure(description: "gnome-keyring-daemon did not start: \(keyring.standardError)") }
    }

    deinit { stop() }

    /// Ends the bus and every process started with this session's home (gnome-keyring-daemon).
    func stop() {
        let marker = Data("HOME=\(home.path)\0".utf8)
        for name in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = pid_t(name), let environ = FileManager.default.contents(atPath: "/proc/\(name)/environ"),
                  environ.range(of: marker) != nil else { continue }
            kill(pid, SIGKILL)
        }
        kill(busPID, SIGKILL)
        try? FileManager.default.removeItem(at: home)
    }

    /// `secret-tool ARGUMENTS` on this bus.
    /// `mypass-sync ARGUMENTS` with this session's keyring reachable.
    func tool(_ arguments: [String], input: String = "") throws -> ToolRunner.Outcome {
        try ToolRunner.run(arguments, input: input, environment: environment)
    }

    func secretTool(_ arguments: [String], input: String = "") throws -> ProcessRunner.Outcome {
        try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/secret-tool"), arguments, input: Data(input.utf8), environment: environment)
    }
}

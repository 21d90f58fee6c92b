import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Polls `condition` every 50 ms until it holds or `seconds` passed; whether it held.
func eventually(within seconds: TimeInterval, _ condition: () throws -> Bool) rethrows -> Bool {
    try pollUntil(timeout: seconds, interval: 0.05, condition)
}

/// A home for one daemon test: configuration, runtime (0700), state (0700) and sync folders, and the
/// environment that points `mypass-sync` at them (plus `extra`, a session bus say).
struct DaemonHome {
    let root: URL
    let environment: [String: String]

    init(root: URL? = nil, extra: [String: String] = [:]) throws {
        let root = try root ?? CLIFixtures.scratch()
        self.root = root
        for (name, mode) in [("config", 0o700), ("run", 0o700), ("state", 0o700), ("sync", 0o755)] {
            try FileManager.default.createDirectory(at: root.appendingPathComponent(name), withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: mode])
        }
        environment = extra.merging(["XDG_CONFIG_HOME": root.appendingPathComponent("config").path,
                                     "XDG_RUNTIME_DIR": root.appendingPathComponent("run").path,
                                     "XDG_STATE_HOME": root.appendingPathComponent("state").path]) { $1 }
    }

    var sync: URL { root.appendingPathComponent("sync") }
    var socket: String { root.appendingPathComponent("run/mypass-sync/daemon.sock").path }
    var configuration: String { root.appendingPathComponent("config/mypass-sync/daemon.conf").path }

    /// A copy of the fixture `fixture` at `sync/name`; its path.
    func vault(_ name: String, from fixture: String) throws -> String {
        let path = sync.appendingPathComponent(name).path
        try FileManager.default.copyItem(atPath: fixture, toPath: path)
        return path
    }

    /// A file holding `password`, 0600, and the password command that prints it (no password in argv).
    func passwordCommand(_ password: String, name: String) throws -> String {
        let file = root.appendingPathComponent(name)
        try Data((password + "\n").utf8).write(to: file)
        chmod(file.path, 0o600)
        return "cat '\(file.path)'"
    }

    /// `mypass-sync ARGUMENTS` in this home.
    func tool(_ arguments: [String], input: String = "") throws -> ToolRunner.Outcome {
        try ToolRunner.run(arguments, input: input, environment: environment)
    }

    /// A conflict copy of `vault` (Syncthing's name, `device`) with an entry `title` added by
    /// keepassxc-cli, made outside the folder and moved in with one rename; its path.
    func conflictCopy(of vault: String, password: String, adding title: String, device: String, second: Int = 10) throws -> String {
        let work = root.appendingPathComponent("work-\(UUID().uuidString).kdbx").path
        try FileManager.default.copyItem(atPath: vault, toPath: work)
        let added = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), ["keepassxc-cli", "add", "-q", work, title],
                                          input: Data((password + "\n").utf8), environment: ["QT_QPA_PLATFORM": "offscreen"])
        #expect(added.status == 0, "\(added.standardError)")
        let stem = ((vault as NSString).lastPathComponent as NSString).deletingPathExtension
        let copy = sync.appendingPathComponent("\(stem).sync-conflict-20261203-1010\(String(format: "%02d", second))-\(device).kdbx").path
        #expect(rename(work, copy) == 0)
        return copy
    }

    /// The entry titles keepassxc-cli lists in `vault` (nil: it does not open).
    func titles(_ vault: String, password: String?, keyFile: String? = nil) throws -> [String]? {
        var arguments = ["keepassxc-cli", "ls", "-q", "-R", "-f"]
        if let keyFile { arguments += ["-k", keyFile] }
        if password == nil { arguments.append("--no-password") }
        let listed = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), arguments + [vault],
                                           input: Data(((password ?? "") + "\n").utf8), environment: ["QT_QPA_PLATFORM": "offscreen"])
        guard listed.status == 0 else { return nil }
        return listed.output.split(separator: "\n").map { String($0.split(separator: "/").last ?? "") }
    }
}

/// `mypass-sync daemon run --json` in a `DaemonHome`, its events read back from a file.
final class DaemonProcess {
    let process = Process()
    let home: DaemonHome
    private let output: URL
    private let errors: URL

    init(_ home: DaemonHome, environment extra: [String: String] = [:]) throws {
        self.home = home
        output = home.root.appendingPathComponent("daemon-\(UUID().uuidString).out")
        errors = home.root.appendingPathComponent("daemon-\(UUID().uuidString).err")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", unblockedHelper, try ToolRunner.binary().path, "daemon", "run", "--json"]
        process.environment = ProcessInfo.processInfo.environment.merging(home.environment.merging(extra) { $1 }) { $1 }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: output)
        process.standardError = try FileHandle(forWritingTo: errors)
        try process.run()
        // Up once it answers on its socket.
        #expect(try eventually(within: 60) { try home.tool(["daemon", "status"]).status == 0 }, "the daemon did not come up: \(errorText)")
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// Every event printed so far.
    var events: [[String: Any]] {
        let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    var errorText: String { (try? String(contentsOf: errors, encoding: .utf8)) ?? "" }
    var outputText: String { (try? String(contentsOf: output, encoding: .utf8)) ?? "" }

    /// The events of `kind` about `vault` so far.
    func events(_ kind: String, vault: String) -> [[String: Any]] {
        events.filter { $0["kind"] as? String == kind && $0["vault"] as? String == vault }
    }

    /// Waits until `count` events of `kind` about `vault` were printed.
    @discardableResult
    func waitFor(_ kind: String, vault: String, count: Int = 1, within seconds: TimeInterval = 60) -> Bool {
        eventually(within: seconds) { events(kind, vault: vault).count >= count }
    }

    /// `daemon status --json`, decoded.
    func status() throws -> [String: [String: Any]] {
        let outcome = try home.tool(["daemon", "status", "--json"])
        guard let document = (try? JSONSerialization.jsonObject(with: Data(outcome.standardOutput.utf8))) as? [String: Any] else {
            throw StatusFailure(description: "daemon status exited \(outcome.status) without a JSON answer: \(outcome.standardError.suffix(500))")
        }
        var byPath: [String: [String: Any]] = [:]
        for vault in document["vaults"] as? [[String: Any]] ?? [] { byPath[vault["path"] as? String ?? ""] = vault }
        return byPath
    }

    /// `daemon status` gave no answer (its exit status and what it said instead).
    struct StatusFailure: Error, CustomStringConvertible {
        let description: String
    }

    /// The state `daemon status` gives `vault`.
    func state(of vault: String) -> String? {
        (try? status())?[vault]?["state"] as? String
    }

    /// Sends `signal` and waits for the end (at most `seconds`); the exit status, nil if it did not end.
    func end(with signal: Int32 = SIGTERM, within seconds: TimeInterval = 15) -> Int32? {
        kill(process.processIdentifier, signal)
        guard eventually(within: seconds, { !process.isRunning }) else { return nil }
        return process.terminationStatus
    }
}

/// dunst on a session bus, shown on an Xvfb display of its own: the notification server the
/// daemon's notices go to, read back with `dunstctl history`. With `menuPick`, dunst's context menu
/// program (its `dmenu` setting, what a person picks an action from) is a script that picks the
/// first action whose line holds that text, and keeps the lines it was offered in `menuOffered`.
final class NotificationServer {
    private let display: ClipboardTests.Display
    private let process = Process()
    private let environment: [String: String]
    /// The lines dunst's context menu offered (with `menuPick`).
    let menuOffered: String

    init(bus: [String: String], menuPick: String? = nil) throws {
        display = try ClipboardTests.Display()
        environment = ["DBUS_SESSION_BUS_ADDRESS": bus["DBUS_SESSION_BUS_ADDRESS"] ?? "", "DISPLAY": display.name,
                       "HOME": bus["HOME"] ?? NSTemporaryDirectory()]
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dunst-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        menuOffered = folder + "/menu-offered"
        var arguments = ["python3", unblockedHelper, "/usr/bin/dunst"]
        if let menuPick {
            let menu = folder + "/menu"
            try "#!/bin/sh\ntee \(menuOffered).part | grep -m1 -F -- '\(menuPick)'\nmv \(menuOffered).part \(menuOffered)\n".write(toFile: menu, atomically: true, encoding: .utf8)
            #expect(chmod(menu, 0o755) == 0)
            try "[global]\n    dmenu = \(menu)\n".write(toFile: folder + "/dunstrc", atomically: true, encoding: .utf8)
            arguments += ["-config", folder + "/dunstrc"]
        }
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        #expect(try eventually(within: 10) { try dunstctl(["count"]).status == 0 }, "dunst did not come up")
    }

    deinit {
        process.terminate()
        process.waitUntilExit()
    }

    private func dunstctl(_ arguments: [String]) throws -> ProcessRunner.Outcome {
        try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/dunstctl"), arguments, environment: environment)
    }

    /// Opens dunst's context menu (as a person does to press a notice's button): the menu program
    /// picks the action.
    func openContextMenu() throws {
        #expect(try dunstctl(["context"]).status == 0)
    }

    /// How many notices are on screen now.
    func displayed() throws -> Int {
        Int(try dunstctl(["count", "displayed"]).output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    }

    /// One notice as dunst received it.
    struct Notice {
        let application: String
        let summary: String
        let body: String
    }

    /// Every notice received so far (those on screen closed first, so that they are in the history),
    /// and the history's JSON text.
    func history() throws -> (notices: [Notice], text: String) {
        _ = try dunstctl(["close-all"])
        let text = try dunstctl(["history"]).output
        let document = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] ?? [:]
        let items = (document["data"] as? [[[String: Any]]])?.first ?? []
        func value(_ item: [String: Any], _ key: String) -> String { (item[key] as? [String: Any])?["data"] as? String ?? "" }
        return (items.map { Notice(application: value($0, "appname"), summary: value($0, "summary"), body: value($0, "body")) }, text)
    }

    /// Waits until a notice whose summary contains `text` arrived; the notices then.
    func waitForNotice(containing text: String, within seconds: TimeInterval = 15) throws -> [Notice] {
        var notices: [Notice] = []
        _ = try eventually(within: seconds) {
            notices = try history().notices
            return notices.contains { $0.summary.contains(text) }
        }
        return notices
    }
}

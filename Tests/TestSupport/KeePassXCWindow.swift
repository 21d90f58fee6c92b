public import Foundation
#if canImport(Glibc)
internal import Glibc
#endif

/// The real KeePassXC GUI (Debian's `keepassxc`, 2.7.4) with one vault open, on an Xvfb display of
/// its own, with a private HOME and XDG folders whose `keepassxc.ini` turns KeeShare import and
/// export on. KeePassXC's command line has no KeeShare: this is how tests make KeePassXC export a
/// shared group to its container and import a container into a vault. xdotool types the keys.
///
/// Every wait has a deadline and waits for an event (a file that changes, a window that shows), not
/// for a fixed time. A failed wait throws `Failure` with what KeePassXC printed; KeePassXC and Xvfb
/// are killed when the window is dropped without `close()`. Facts measured with it:
/// docs/keeshare-keepassxc-notes.md.
///
///     let window = try KeePassXCWindow(vault: vault, password: "vault-pw")
///     try window.exportShares(to: vault.deletingLastPathComponent().appendingPathComponent("shared.kdbx"))
///     try window.close()
public final class KeePassXCWindow {
    /// A step that did not happen in time, or a program that is missing.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// The keepassxc.ini every window starts with: KeeShare import and export on
    /// (`KeeShare/Active`), a second instance allowed (`SingleInstance=false`), autosave after every
    /// change and on exit, reload when the file changes, no update check and no question about it, no
    /// remembered databases, no idle lock, no tray.
    public static let configuration = """
        [General]
        ConfigVersion=2
        SingleInstance=false
        RememberLastDatabases=false
        RememberLastKeyFiles=false
        OpenPreviousDatabasesOnStartup=false
        AutoSaveAfterEveryChange=true
        AutoSaveOnExit=true
        AutoReloadOnChange=true
        BackupBeforeSave=false
        UpdateCheckMessageShown=true

        [GUI]
        CheckForUpdates=false
        ShowTrayIcon=false
        MinimizeOnStartup=false
        MinimizeOnClose=false
        ShowExpiredEntriesOnDatabaseUnlock=false

        [Security]
        LockDatabaseIdle=false
        LockDatabaseScreenLock=false

        [KeeShare]
        Active="<?xml version=\\"1.0\\"?><KeeShare><Active><Import/><Export/></Active></KeeShare>\\n"

        """

    /// The programs a window needs that are not installed (scripts/setup installs them).
    public static func missingPrograms() -> [String] {
        ["/usr/bin/keepassxc", "/usr/bin/keepassxc-cli", "/usr/bin/Xvfb", "/usr/bin/xdotool"]
            .filter { !FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// The vault KeePassXC has open.
    public let vault: URL
    /// The private folder: HOME, XDG folders, TMPDIR (KeePassXC's lock file), removed by `close()`.
    public let root: URL
    /// Seconds from starting KeePassXC until its window showed the vault unlocked.
    public private(set) var startupSeconds: Double = 0
    private var display: XvfbDisplay?
    private var process = Process()
    private var output: OutputCollector
    /// How many times KeePassXC was started (more than one: it could not connect to the display).
    public private(set) var startAttempts = 0
    private let environment: [String: String]
    private var window = ""

    /// Starts Xvfb and KeePassXC on `vault` (the password through `--pw-stdin`), and waits at most
    /// `timeout` seconds until the window shows the vault unlocked. KeePassXC imports the vault's
    /// import references while it opens it.
    public init(vault: URL, password: String, timeout: Double = 120) throws {
        let missing = Self.missingPrograms()
        guard missing.isEmpty else {
            throw Failure(description: "KeePassXC GUI tests need \(missing.joined(separator: ", ")): run scripts/setup")
        }
        self.vault = vault
        // The display first: should a folder fail, the display's own deinit stops Xvfb.
        let display = try XvfbDisplay(screen: "1280x800x24", owner: vault.path)
        self.display = display
        root = FileManager.default.temporaryDirectory.appendingPathComponent("mypass-keepassxc-gui-\(UUID().uuidString)")
        for name in ["home", "config/keepassxc", "cache", "data", "run", "tmp"] {
            try FileManager.default.createDirectory(at: root.appendingPathComponent(name), withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        }
        try Data(Self.configuration.utf8).write(to: root.appendingPathComponent("config/keepassxc/keepassxc.ini"))
        // Only what KeePassXC needs: no session bus, no Wayland, the C locale (the menu letters typed
        // below are the English ones), the X server of this window.
        environment = [
            "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
            "HOME": root.appendingPathComponent("home").path,
            "XDG_CONFIG_HOME": root.appendingPathComponent("config").path,
            "XDG_CACHE_HOME": root.appendingPathComponent("cache").path,
            "XDG_DATA_HOME": root.appendingPathComponent("data").path,
            "XDG_RUNTIME_DIR": root.appendingPathComponent("run").path,
            "TMPDIR": root.appendingPathComponent("tmp").path,
            "DISPLAY": display.name, "QT_QPA_PLATFORM": "xcb", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "NO_AT_BRIDGE": "1",
        ]
        output = OutputCollector(FileHandle.nullDevice)
        let started = Date()
        // With both cores busy KeePassXC was seen, now and then, to end at once printing "could not
        // connect to display" though the Xvfb that reported the display was running: started again
        // then (at most twice more), each start counted in `startAttempts`.
        while true {
            do {
                try startKeePassXC(password: password)
                window = try waitForWindow(timeout: max(1, timeout - Date().timeIntervalSince(started)))
                break
            } catch {
                if startAttempts < 3, !process.isRunning,
                   String(decoding: output.all(timeout: 5), as: UTF8.self).contains("could not connect to display"),
                   Date().timeIntervalSince(started) < timeout {
                    continue
                }
                kill()
                throw error
            }
        }
        startupSeconds = Date().timeIntervalSince(started)
    }

    /// Starts KeePassXC on the vault with `password` on its standard input.
    private func startKeePassXC(password: String) throws {
        process = Process()
        startAttempts += 1
        let input = Pipe(), printed = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        // With no signal blocked (Helpers/unblocked.py execs KeePassXC: same process), so that SIGTERM
        // makes it quit cleanly.
        process.arguments = ["python3", unblockedHelper, "/usr/bin/keepassxc", "--pw-stdin", vault.path]
        process.environment = environment
        process.standardInput = input
        process.standardOutput = printed
        process.standardError = printed
        output = OutputCollector(printed.fileHandleForReading, limit: 64 << 10)
        try process.run()
        input.fileHandleForWriting.write(Data((password + "\n").utf8))
        try input.fileHandleForWriting.close()
    }

    deinit { kill() }

    /// What KeePassXC printed on standard output and error (its last 64 KiB).
    public var log: String { output.text }

    /// Whether KeePassXC is still running.
    public var isRunning: Bool { process.isRunning }

    /// Makes KeePassXC save the vault, which exports every export reference, and waits at most
    /// `timeout` seconds until `container` appears or changes; the seconds that took. KeePassXC saves
    /// only a changed vault: the change is Groups > Sort A-Z on the selected group (the root after
    /// opening), which autosaves. It orders the groups by name and changes nothing else. Tried again
    /// (Escape first) when the menu or the save did not happen.
    @discardableResult
    public func exportShares(to container: URL, timeout: Double = 90) throws -> Double {
        let before = FileStamp(container), started = Date()
        var attempts: [String] = []
        while Date().timeIntervalSince(started) < timeout {
            let left = timeout - Date().timeIntervalSince(started)
            do {
                try sortGroups(menuTimeout: min(10, left))
                if pollUntil(timeout: min(20, max(0, timeout - Date().timeIntervalSince(started))), interval: 0.02, {
                    FileStamp(container) != before || !process.isRunning
                }) {
                    guard process.isRunning else { break }
                    return Date().timeIntervalSince(started)
                }
                attempts.append("sorted, no export within 20 s")
            } catch {
                attempts.append("\(error)")
            }
            guard process.isRunning else { break }
            _ = try? xdotool(["key", "Escape", "Escape"])
        }
        throw Failure(description: "KeePassXC did not write \(container.lastPathComponent) within \(timeout) s "
            + "(attempts: \(attempts.joined(separator: "; ")); running: \(process.isRunning)); it printed: \(log.suffix(4000))")
    }

    /// Waits at most `timeout` seconds until `condition` holds; it is checked now and each time the
    /// vault file changes on disk (KeePassXC autosaves after an import), never more often. The seconds
    /// that took. A condition that throws counts as not holding (a save may be under way); its last
    /// error is in the failure.
    @discardableResult
    public func waitForVault(_ what: String, timeout: Double = 120, until condition: () throws -> Bool) throws -> Double {
        let started = Date()
        var first = true, checked: FileStamp?
        var lastError: (any Error)?
        let held = pollUntil(timeout: timeout, interval: 0.05) {
            let stamp = FileStamp(vault)
            guard first || stamp != checked else { return false }
            first = false
            checked = stamp
            do {
                lastError = nil
                return try condition()
            } catch {
                lastError = error
                return false
            }
        }
        guard held else {
            throw Failure(description: "waited \(timeout) s for \(what) in \(vault.lastPathComponent) in vain"
                + (lastError.map { " (last check: \($0))" } ?? "") + "; KeePassXC running: \(process.isRunning); it printed: \(log.suffix(4000))")
        }
        return Date().timeIntervalSince(started)
    }

    /// How many quit requests the last `close()` made (more than one: KeePassXC dropped the first).
    public private(set) var quitRequests = 0

    /// Quits KeePassXC as a person would (SIGTERM: it saves a changed vault and exits), waits at most
    /// `timeout` seconds for its end, stops Xvfb and removes the private folder. Its exit status.
    /// With both cores busy KeePassXC now and then drops the quit a SIGTERM asks for: the vault ends
    /// up locked, the window open and idle, and it ignores every later SIGTERM (2.7.4 turns its signal
    /// notifier off at the first one). When it still runs `retryAfter` seconds after a request, it is
    /// asked again as a person would: Ctrl+Q in its window. Throws (after killing it) when it did not
    /// end in time.
    @discardableResult
    public func close(timeout: Double = 60, retryAfter: Double = 10) throws -> Int32 {
        defer { kill() }
        quitRequests = 0
        guard process.isRunning else { return process.terminationStatus }
        let started = Date()
        var states: [String] = [], problems: [String] = []
        while process.isRunning, Date().timeIntervalSince(started) < timeout {
            if quitRequests == 0 {
                Glibc.kill(process.processIdentifier, SIGTERM)
            } else {
                states.append(stateNow())
                do {
                    _ = try xdotool(["windowfocus", "--sync", window])
                    _ = try xdotool(["key", "ctrl+q"])
                } catch {
                    problems.append("\(error)")
                }
            }
            quitRequests += 1
            _ = pollUntil(timeout: min(retryAfter, max(0, timeout - Date().timeIntervalSince(started))), interval: 0.02) { !process.isRunning }
        }
        guard !process.isRunning else {
            throw Failure(description: "KeePassXC did not quit within \(timeout) s of SIGTERM and \(quitRequests - 1) Ctrl+Q (\(stateNow()); "
                + "before each Ctrl+Q: \(states); \(problems)); it printed: \(log.suffix(4000))")
        }
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// Kills KeePassXC and Xvfb (what is still running) and removes the private folder.
    public func kill() {
        if process.isRunning {
            Glibc.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        display?.stop()
        display = nil
        try? FileManager.default.removeItem(at: root)
    }

    /// What KeePassXC shows and does now, for a failure: its visible windows' titles, its process
    /// state and the kernel function it waits in.
    private func stateNow() -> String {
        let titles = ((try? visibleWindows()) ?? []).map { (try? xdotool(["getwindowname", $0]).trimmingCharacters(in: .newlines)) ?? "?" }
        func proc(_ name: String) -> String {
            (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/\(name)", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines) ?? "?"
        }
        let state = proc("stat").split(separator: ")").last?.split(separator: " ").first.map(String.init) ?? "?"
        return "windows: \(titles), state \(state), waiting in \(proc("wchan"))"
    }

    // MARK: - The GUI

    /// `xdotool ARGUMENTS` on this window's display, at most 20 s; its output.
    private func xdotool(_ arguments: [String]) throws -> String {
        let outcome = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/xdotool"), arguments, environment: ["DISPLAY": environment["DISPLAY"] ?? ""],
                                            timeout: 20)
        guard outcome.status == 0 else { throw Failure(description: "xdotool \(arguments.joined(separator: " ")) exited \(outcome.status): \(outcome.standardError)") }
        return outcome.output
    }

    /// KeePassXC's visible windows (its main window, an open menu).
    private func visibleWindows() throws -> Set<String> {
        // Exit status 1 with no output: none.
        let outcome = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/xdotool"),
                                            ["search", "--onlyvisible", "--pid", "\(process.processIdentifier)"],
                                            environment: ["DISPLAY": environment["DISPLAY"] ?? ""], timeout: 20)
        return Set(outcome.output.split(separator: "\n").map(String.init))
    }

    /// Waits until KeePassXC's main window shows an unlocked database ("NAME - KeePassXC" or
    /// "NAME* - KeePassXC", not "NAME [Locked] - KeePassXC"); its window id.
    private func waitForWindow(timeout: Double) throws -> String {
        var titles: [String] = []
        var found: String?
        _ = try pollUntil(timeout: timeout, interval: 0.1) {
            guard process.isRunning else { return true }
            titles = []
            for id in try visibleWindows() {
                let title = try xdotool(["getwindowname", id]).trimmingCharacters(in: .newlines)
                titles.append(title)
                if title.hasSuffix(" - KeePassXC"), !title.contains("[Locked]") { found = id }
            }
            return found != nil
        }
        guard let found, process.isRunning else {
            throw Failure(description: "KeePassXC showed no unlocked \(vault.lastPathComponent) within \(timeout) s "
                + "(running: \(process.isRunning), windows: \(titles), start \(startAttempts), Xvfb on \(display?.name ?? "?"): \(display?.state ?? "none"), "
                + "it printed: \(display?.log.suffix(2000) ?? "")); "
                + "it printed: \(log.suffix(4000))")
        }
        return found
    }

    /// Groups > Sort A-Z: focuses the main window, opens the Groups menu (Alt+G) and waits until it
    /// shows, then picks Sort A-Z (A). The pointer is moved off the window first: a tooltip under it
    /// would be a new window too.
    private func sortGroups(menuTimeout: Double) throws {
        _ = try xdotool(["mousemove", "1279", "799"])  // the bottom right corner of the 1280x800 screen, off the 800x600 window
        _ = try xdotool(["windowfocus", "--sync", window])
        let before = try visibleWindows()
        _ = try xdotool(["key", "alt+g"])
        guard try pollUntil(timeout: menuTimeout, interval: 0.02, { try !visibleWindows().subtracting(before).isEmpty }) else {
            throw Failure(description: "the Groups menu did not open within \(menuTimeout) s")
        }
        _ = try xdotool(["key", "a"])
    }
}

/// What identifies one version of a file: a replaced file (a new inode), a rewritten one (size, time).
public struct FileStamp: Equatable, Sendable {
    public let inode: UInt64
    public let size: Int64
    public let modified: Int64

    /// The stamp of the file at `url` now; nil when there is none.
    public init?(_ url: URL) {
        var status = stat()
        guard stat(url.path, &status) == 0 else { return nil }
        inode = UInt64(status.st_ino)
        size = Int64(status.st_size)
        modified = Int64(status.st_mtim.tv_sec) * 1_000_000_000 + Int64(status.st_mtim.tv_nsec)
    }
}

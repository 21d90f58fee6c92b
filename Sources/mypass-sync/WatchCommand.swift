#if canImport(Glibc)
import Glibc
#endif
internal import Foundation
import Synchronization
internal import KDBXFormat
internal import MyPassMerge
internal import MyPassSync

/// `mypass-sync watch VAULT... [--policy ...] [--conflict-copies ...] [--poll SECONDS] [--json] [--once]`.
struct WatchCommand: Command {
    let name = "watch"
    let summary = "Keep watching vaults: take in external changes, fold in sync-conflict copies."
    let usage = "mypass-sync watch <vault>... [--policy merge|reload|ask] [--conflict-copies merge|report|ignore] [--poll SECONDS] [--debounce SECONDS] [--copy-grace SECONDS] [--json] [--once] [credentials]"
    let options: [OptionSpec] = [
        .value("--policy", valueName: "merge|reload|ask", help: "On an external change: take it in, putting back what a program saving over an unread version dropped (merge, the default); take it as it is (reload); or report a decision (ask)."),
        .value("--conflict-copies", valueName: "merge|report|ignore", help: "Sync-conflict copies: fold in (default), report, ignore."),
        .value("--poll", valueName: "seconds", help: "Also compare fingerprints every SECONDS (for NFS, SMB, sshfs, FUSE)."),
        .value("--debounce", valueName: "seconds", help: "Quiet time after the last event before a vault is read (default 0.3)."),
        .value("--copy-grace", valueName: "seconds", help: "Leave a conflict copy made on another device to that device this long before merging it here (default 0: at once)."),
        .flag("--json", help: "One JSON object per line per event."),
        .flag("--once", help: "Handle what is pending, then exit."),
    ] + Credentials.options + [SessionOptions.stateOption]
    var details: String { options.helpSection }

    /// Quiet time after the last event before a vault is checked (a sync engine writes in bursts).
    static let defaultDebounce: TimeInterval = 0.3
    /// How long a conflict copy that arrived from another device is left to that device. Measured
    /// with real Syncthing (README): no clear gain from a 15 s grace, and a delay whenever that device
    /// runs no watcher, so by default copies are merged at once.
    static let defaultCopyGrace: TimeInterval = 0
    /// How long a version that looks like a rollback waits for the conflict copy holding this
    /// device's newer version (the other device makes it and ships it after its watcher delay).
    static let rollbackHold: TimeInterval = 20
    /// The longest wait between two checks of a vault whose check keeps failing.
    static let maximumBackoff: TimeInterval = 60
    /// How long `--once` waits for a sync engine's transfer into the folder to finish.
    static let onceTransferWait: TimeInterval = 30

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        let parsed = try ParsedArguments.parse(arguments, options: options, command: name)
        guard !parsed.positionals.isEmpty else { throw CommandLineError.usage(message: "watch needs at least one vault", command: name) }
        guard let policy = VaultWatcher.Policy(rawValue: parsed.value("policy") ?? "merge") else {
            throw CommandLineError.usage(message: "--policy must be merge, reload or ask", command: name)
        }
        guard let copyPolicy = VaultWatcher.CopyPolicy(rawValue: parsed.value("conflict-copies") ?? "merge") else {
            throw CommandLineError.usage(message: "--conflict-copies must be merge, report or ignore", command: name)
        }
        let poll = try parsed.value("poll").map { text -> TimeInterval in
            guard let seconds = Double(text), seconds > 0 else { throw CommandLineError.usage(message: "--poll takes seconds", command: name) }
            return seconds
        }
        let debounce = try parsed.value("debounce").map { text -> TimeInterval in
            guard let seconds = Double(text), seconds >= 0, seconds <= 60 else {
                throw CommandLineError.usage(message: "--debounce takes seconds (0 to 60)", command: name)
            }
            return seconds
        } ?? Self.defaultDebounce
        let copyGrace = try parsed.value("copy-grace").map { text -> TimeInterval in
            guard let seconds = Double(text), seconds >= 0, seconds <= 3600 else {
                throw CommandLineError.usage(message: "--copy-grace takes seconds (0 to 3600)", command: name)
            }
            return seconds
        } ?? Self.defaultCopyGrace
        let vaults = parsed.positionals.map { DurableFile.resolvedPath($0) }
        let first = try FileReading.readAll(atPath: vaults[0])
        try KDBXReader.header(of: first).kdf.check(against: Credentials.limits(parsed, command: name))  // Before the password.
        let key = try Credentials.compositeKey(parsed, vaultPath: vaults[0], command: name)  // Asked once.
        let limits = try Credentials.limits(parsed, command: name)
        let printer = EventPrinter(json: parsed.flag("json"))
        let rotatesKDFSalt = try DeviceSettings.load().rotateKDFSalt
        let watchers = vaults.map { path in
            // --once handles what is pending now, copies from other devices included.
            VaultWatcher(path: path, key: key, state: SessionOptions.state(parsed), limits: limits, policy: policy,
                         copyPolicy: copyPolicy, foreignCopyGrace: parsed.flag("once") ? 0 : copyGrace,
                         rollbackHold: parsed.flag("once") ? 0 : Self.rollbackHold) { printer.print($0) }
        }
        for watcher in watchers { watcher.rotatesKDFSalt = rotatesKDFSalt }
        if parsed.flag("once") {
            for watcher in watchers {
                // A sync engine mid-transfer: wait (bounded) until it has renamed its file into place.
                let deadline = Date().addingTimeInterval(Self.onceTransferWait)
                while !watcher.check() && watcher.waitingForTransfer && Date() < deadline { usleep(200_000) }
            }
            return .success
        }
        let dirty = DirtySet()
        for watcher in watchers {
            dirty.mark(watcher.path)
            let directory = (watcher.path as NSString).deletingLastPathComponent
            let fileName = (watcher.path as NSString).lastPathComponent
            let path = watcher.path
            DirectoryEvents.instance.watch(directory) { event in
                // The kernel's queue overflowed (events were dropped): look at every vault again.
                if event.overflow && (event.directory.isEmpty || event.directory == directory) {
                    if event.directory.isEmpty {
                        printer.print(VaultWatcher.Event(kind: .rescan, vault: path, detail: "inotify queue overflowed; checking again", changes: []))
                    }
                    dirty.mark(path)
                    return
                }
                // Only the vault's own name and its conflict copies matter; temp files never do.
                guard event.directory == directory else { return }
                if event.directoryGone || event.name == fileName || ConflictCopies.engine(ofName: event.name, forVaultNamed: fileName) != nil {
                    dirty.mark(path)
                }
            }
        }
        ShutdownSignal.install()
        var lastPoll = Date()
        var pollInterval = poll
        var announcedPolling = false
        var failures: [String: Int] = [:]
        while !ShutdownSignal.requested {
            usleep(20_000)
            // No inotify (limit reached, unsupported file system): say so and poll instead.
            if let reason = DirectoryEvents.instance.unavailable, !announcedPolling {
                announcedPolling = true
                pollInterval = pollInterval ?? 2
                printer.print(VaultWatcher.Event(kind: .pollingOnly, vault: "", detail: reason, changes: []))
            }
            if let poll = pollInterval, Date().timeIntervalSince(lastPoll) >= poll {
                lastPoll = Date()
                for watcher in watchers { dirty.mark(watcher.path) }
            }
            for watcher in watchers where dirty.isQuiet(watcher.path, for: debounce) {
                dirty.clear(watcher.path)
                if watcher.check() {
                    failures[watcher.path] = 0
                } else {
                    // Waiting (a transfer, a copy left to its device): again in a second. Failing:
                    // backing off, 1 s doubling up to a minute (reported once by the watcher).
                    let count = watcher.failedLastCheck ? failures[watcher.path, default: 0] + 1 : 0
                    failures[watcher.path] = count
                    dirty.mark(watcher.path, after: count == 0 ? 1.0 : min(pow(2.0, Double(count - 1)), Self.maximumBackoff))
                }
            }
        }
        DirectoryEvents.instance.stop()
        printer.print(VaultWatcher.Event(kind: .stopped, vault: "", detail: "shutting down on signal", changes: []))
        return .success
    }
}

/// Vaults with pending changes and when their last event came.
private final class DirtySet: @unchecked Sendable {
    private let lock = NSLock()
    private var since: [String: Date] = [:]

    func mark(_ path: String, after delay: TimeInterval = 0) {
        lock.lock()
        since[path] = Date().addingTimeInterval(delay)
        lock.unlock()
    }

    func isQuiet(_ path: String, for interval: TimeInterval) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard let last = since[path] else { return false }
        return Date().timeIntervalSince(last) >= interval
    }

    func clear(_ path: String) {
        lock.lock()
        since[path] = nil
        lock.unlock()
    }
}

/// SIGINT / SIGTERM end the watch loop between checks (never in the middle of a write).
private enum ShutdownSignal {
    private static let flag = Atomic<Bool>(false)

    static var requested: Bool { flag.load(ordering: .relaxed) }

    static func install() {
        signal(SIGINT) { _ in ShutdownSignal.flag.store(true, ordering: .relaxed) }
        signal(SIGTERM) { _ in ShutdownSignal.flag.store(true, ordering: .relaxed) }
        // A parent may have started us with these signals blocked; the watcher must hear them.
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }
}

/// Prints watch events as text lines or JSON lines, one write per event.
private final class EventPrinter: @unchecked Sendable {
    let json: Bool
    private let lock = NSLock()

    init(json: Bool) { self.json = json }

    struct Line: Encodable {
        let schema = 1
        let time: String
        let kind: VaultWatcher.Event.Kind
        let vault: String
        let detail: String
        let changes: [Change]
    }

    func print(_ event: VaultWatcher.Event) {
        let time = ISO8601DateFormatter().string(from: Date())
        var text: String
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            let line = Line(time: time, kind: event.kind, vault: event.vault, detail: event.detail, changes: event.changes)
            text = (try? String(decoding: encoder.encode(line), as: UTF8.self)) ?? "{}"
        } else {
            text = "\(time) \(event.kind.rawValue) \(event.vault.terminalSafe)" + (event.detail.isEmpty ? "" : ": \(event.detail.terminalSafe)")
            for change in event.changes { text += "\n  " + ChangeText.line(change) }
        }
        lock.lock()
        var streams = StandardStreams()
        streams.print(text)
        lock.unlock()
    }
}

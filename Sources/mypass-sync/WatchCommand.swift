internal import Dispatch
internal import Foundation
internal import MyPassSync
internal import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// `mypass-sync watch VAULT... [--policy ...] [--conflict-copies ...] [--poll SECONDS] [--json] [--once]`:
/// runs the library's `WatchEngine` and prints its events.
struct WatchCommand: Command {
    func endsAfterOneJob(arguments: [String]) -> Bool { arguments.prefix { $0 != "--" }.contains("--once") }
    let name = "watch"
    let summary = "Keep watching vaults: take in external changes, fold in sync-conflict copies."
    let usage = "mypass-sync watch <vault>... [--policy merge|reload|ask] [--conflict-copies merge|report|ignore] [--poll SECONDS] [--debounce SECONDS] [--copy-grace SECONDS] [--rebuild-grace SECONDS] [--json] [--once] [credentials]"
    let policy = Option<VaultWatcher.Policy>("--policy", help: "On an external change: take it in, putting back what a program saving over an unread version dropped (merge, the default); take it as it is (reload); or report a decision (ask).")
    let copyPolicy = Option<VaultWatcher.CopyPolicy>("--conflict-copies", help: "Sync-conflict copies: fold in (default), report, ignore.")
    let poll = Option<Double>.seconds("--poll", help: "Also compare fingerprints every SECONDS (for NFS, SMB, sshfs, FUSE).", in: 0.01...86_400)
    let debounce = Option<Double>.seconds("--debounce", help: "Quiet time after the last event before a vault is read (default 0.3; events that never pause: read after 5 s or 4 times this).", in: 0...60)
    let copyGrace = Option<Double>.seconds("--copy-grace", help: "Leave a conflict copy made on another device to that device this long before merging it here (default 0: at once).", in: 0...3600)
    let rebuildGrace = Option<Double>.seconds("--rebuild-grace", help: "When rclone bisync renamed both versions aside on another device and only copies arrived here, leave that device this long to rebuild the vault before rebuilding it here (default 3600).", in: 0...(30 * 24 * 3600))
    let json = Flag("--json", help: "One JSON object per line per event.")
    let once = Flag("--once", help: "Handle what is pending, then exit: 0, or the status of the most serious problem met (3 key changed, 4 unreadable vault, 5 decision needed, 6 refused, 7 error).")
    let credentials = CredentialOptions()
    let stateOptions = StateOptions()

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        let parsed = try parse(arguments, count: 1...Int.max)
        let device = try DeviceSettings.load()
        let state = try stateOptions.state(parsed)
        // Checked before the password (a vault that rclone bisync renamed aside: one of its copies). Asked once.
        let vault = parsed.positionals[0]
        let vaultCredentials = try credentials.credentials(
            parsed, forWatching: vault, standIn: VaultWatcher.standIn(for: vault, on: CommandFileSystem.current, naming: device.copyNaming),
            state: state, command: name)
        var settings = WatchEngine.Settings(device: device)
        settings.policy = parsed[policy] ?? settings.policy
        settings.copyPolicy = parsed[copyPolicy] ?? settings.copyPolicy
        settings.pollInterval = parsed[poll]
        settings.debounce = parsed[debounce] ?? settings.debounce
        settings.copyGrace = parsed[copyGrace] ?? settings.copyGrace
        settings.rebuildGrace = parsed[rebuildGrace] ?? settings.rebuildGrace
        if parsed[once] {
            // What is pending now, copies from other devices included; a rollback is refused at once.
            settings.copyGrace = 0
            settings.rollbackHold = 0
        }
        let printer = EventPrinter(json: parsed[json])
        let engine = WatchEngine(vaults: parsed.positionals, credentials: vaultCredentials, limits: credentials.limits(parsed),
                                 state: state, settings: settings) { printer.print($0) }
        if parsed[once] {
            engine.runOnce()
            return printer.worstProblem ?? .success
        }
        let signals = ShutdownSignals { engine.stop() }
        engine.run()
        signals.cancel()
        return .success
    }
}

/// Prints watch events as text lines or JSON lines, one write per event, and keeps the most
/// serious problem among them (the exit status of `--once`).
private final class EventPrinter: Sendable {
    let json: Bool
    /// The most serious problem so far; its lock also keeps the lines of two events apart.
    private let worst = Mutex<ExitCode?>(nil)

    init(json: Bool) { self.json = json }

    func print(_ event: WatchEvent) {
        let now = Date()
        let text = json ? event.jsonLine(at: now) : ReportText.event(event, at: now)
        let status = Self.exitCode(of: event.kind)
        worst.withLock { worst in
            var streams = StandardStreams()
            streams.print(text)
            if let status, status.rawValue > (worst?.rawValue ?? 0) { worst = status }
        }
    }

    /// The most serious problem printed so far, as an exit status (nil: none).
    var worstProblem: ExitCode? { worst.withLock { $0 } }

    /// The exit status a problem with the vault itself stands for (copies left, waits: none).
    static func exitCode(of kind: WatchEvent.Kind) -> ExitCode? {
        switch kind {
        case .keyChanged: .wrongCredentials
        case .unreadable: .corrupt
        case .decisionNeeded: .decisionNeeded
        case .refused: .refusedForSafety
        case .error: .ioError
        default: nil
        }
    }
}

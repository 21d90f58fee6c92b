internal import Dispatch
internal import Foundation
internal import MyPassSync
#if canImport(Glibc)
import Glibc
#endif
internal import Synchronization

/// `mypass-sync daemon run`: the library's `VaultDaemon` with its control socket and desktop
/// notices, SIGHUP rereading the configuration, SIGTERM and SIGINT stopping it (a write in
/// progress finished first), exit 0.
struct DaemonRun {
    let json: Bool
    let state: SyncStateStore

    func run() throws -> ExitCode {
        let printer = DaemonPrinter(json: json)
        let device = try DeviceSettings.load()
        let decisions = DecisionRelay { printer.log($0) }
        let notifier = DesktopNotifier(log: { printer.log($0) }, onDecision: { vault, decision in decisions.decide(vault, decision) },
                                       onApproval: { vault, request in decisions.approve(vault, request) })
        let daemon = VaultDaemon(state: state, device: device, notifier: notifier, log: { printer.log($0) }) { printer.print($0) }
        decisions.daemon = daemon
        let socket = try ControlSocket(path: try ControlSocket.defaultPath()) { daemon.answer($0) }
        defer { socket.close() }
        let outcome = daemon.reload()
        printer.log("daemon: watching \(outcome.added.count) vault(s); control socket \(try ControlSocket.defaultPath())")
        let reloads = ReloadSignal.observe {
            let outcome = daemon.reload()
            printer.log("daemon: configuration reread (SIGHUP): \(outcome.added.count) added, \(outcome.removed.count) removed, "
                        + "\(outcome.changed.count) changed")
        }
        defer { reloads.cancel() }
        let signals = ShutdownSignals { daemon.stop() }
        daemon.waitUntilStopped()
        signals.cancel()
        printer.print(.stopped)
        return .success
    }
}

/// Where a notice's action button sends its decision: the daemon, once it exists. What was done, or
/// why not, is logged (a button has no other place to answer).
private final class DecisionRelay: Sendable {
    /// The daemon, held weakly (it holds the notifier that holds this relay).
    private struct Target { weak var daemon: VaultDaemon? }
    private let target = Mutex(Target())
    private let log: @Sendable (String) -> Void

    init(log: @escaping @Sendable (String) -> Void) {
        self.log = log
    }

    var daemon: VaultDaemon? {
        get { target.withLock { $0.daemon } }
        set { target.withLock { $0.daemon = newValue } }
    }

    func approve(_ vault: String, _ request: ShareApprovalRequest) {
        DispatchQueue.global().async { [self] in
            guard let daemon else { return }
            do {
                log("daemon: \(vault): \(try daemon.approveShare(vault, request)) (notice button)")
            } catch {
                log("daemon: \(error)")
            }
        }
    }

    func decide(_ vault: String, _ decision: SyncSession.Decision) {
        DispatchQueue.global().async { [self] in
            guard let daemon else { return }
            do {
                log("daemon: \(vault): \(decision.rawValue) (notice button): \(try daemon.decide(vault, decision))")
            } catch {
                log("daemon: \(error)")
            }
        }
    }
}

/// Prints the daemon's watch events (text or JSON lines) and its log lines (standard error), one
/// write each, from any vault's thread.
private final class DaemonPrinter: Sendable {
    let json: Bool
    private let lock = NSLock()

    init(json: Bool) { self.json = json }

    func print(_ event: WatchEvent) {
        let now = Date()
        let text = json ? event.jsonLine(at: now) : ReportText.event(event, at: now)
        lock.withLock {
            var streams = StandardStreams()
            streams.print(text)
        }
    }

    func log(_ line: String) {
        lock.withLock {
            var streams = StandardStreams()
            streams.printError(line.terminalSafe)
        }
    }
}

/// SIGHUP: the daemon rereads its configuration. The signal is blocked in every thread from the
/// start of a `daemon` process (`block`, before any thread exists) and read by a dispatch source.
enum ReloadSignal {
    /// Blocks SIGHUP in this thread and every thread started later.
    static func block() {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGHUP)
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    /// Calls `handler` on each SIGHUP until the returned source is cancelled.
    static func observe(_ handler: @escaping @Sendable () -> Void) -> any DispatchSourceSignal {
        let source = DispatchSource.makeSignalSource(signal: SIGHUP, queue: .global())
        source.setEventHandler(handler: handler)
        source.resume()
        return source
    }
}

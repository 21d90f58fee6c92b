internal import Foundation
#if canImport(Glibc)
internal import Glibc
#endif

/// An Xvfb X server of a test's own (Unix socket only). Xvfb picks a free display number itself and
/// reports it once it accepts clients (`-displayfd`): no guessed numbers, no race between tests.
public final class XvfbDisplay {
    /// Xvfb did not report a display in time, or ended.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// `:N`, for `DISPLAY`.
    public let name: String
    private let server: Process
    private let printed: OutputCollector

    /// Starts Xvfb with one screen of `screen` (WIDTHxHEIGHTxDEPTH) and waits (at most `timeout`
    /// seconds) until it accepts clients.
    /// `owner` is put in the server's environment (`MYPASS_TEST_OWNER`), so a test can tell its own
    /// server from those of tests running beside it.
    public init(screen: String = "1280x800x24", timeout: Double = 30, owner: String? = nil) throws {
        let reported = Pipe(), server = Process()
        self.server = server
        if let owner { server.environment = ProcessInfo.processInfo.environment.merging(["MYPASS_TEST_OWNER": owner]) { $1 } }
        server.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        // Started with no signal blocked: with its timer signals blocked, as the test runner's threads
        // have them, Xvfb takes 10 s to come up (and would ignore SIGTERM).
        server.arguments = ["python3", unblockedHelper, "/usr/bin/Xvfb", "-displayfd", "1", "-nolisten", "tcp",
                            "-screen", "0", screen]
        server.standardInput = FileHandle.nullDevice
        server.standardOutput = reported
        let errors = Pipe()
        server.standardError = errors
        printed = OutputCollector(errors.fileHandleForReading, limit: 8 << 10)
        try server.run()
        let number = OutputCollector(reported.fileHandleForReading, limit: 64)
        var line = ""
        let ready = pollUntil(timeout: timeout, interval: 0.02) {
            line = number.text
            return line.hasSuffix("\n") || !server.isRunning
        }
        guard ready, let display = Int(line.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            let running = server.isRunning
            if running { kill(server.processIdentifier, SIGKILL) }
            server.waitUntilExit()
            throw Failure(description: running ? "Xvfb reported no display within \(timeout) s"
                                               : "Xvfb ended (status \(server.terminationStatus)) before it reported a display")
        }
        name = ":\(display)"
    }

    deinit { stop() }

    /// What Xvfb printed on standard error (its last 8 KiB).
    public var log: String { printed.text }

    /// Whether the server runs, or how it ended (for a failure).
    public var state: String {
        server.isRunning ? "running (pid \(server.processIdentifier))"
            : "ended (\(server.terminationReason == .uncaughtSignal ? "signal" : "status") \(server.terminationStatus))"
    }

    /// Ends the server (SIGTERM, then SIGKILL after `timeout` seconds) and waits for its end.
    public func stop(timeout: Double = 10) {
        guard server.isRunning else { return }
        kill(server.processIdentifier, SIGTERM)
        if !pollUntil(timeout: timeout, interval: 0.02, { !server.isRunning }) {
            kill(server.processIdentifier, SIGKILL)
        }
        server.waitUntilExit()
    }
}

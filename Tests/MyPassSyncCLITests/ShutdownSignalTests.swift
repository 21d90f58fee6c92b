import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// SIGTERM and SIGINT end any command within a few seconds, even in the middle of a key derivation,
/// and nothing is left half written.
@Suite("Shutdown signals end any command within seconds", .serialized)
struct ShutdownSignalTests {
    /// The resident memory of process `pid` in KiB (0: gone).
    static func residentKiB(_ pid: Int32) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }

    /// Starts `mypass-sync ARGUMENTS` with the password on standard input; its process.
    private func start(_ arguments: [String]) throws -> Process {
        let process = Process()
        process.executableURL = try ToolRunner.binary()
        process.arguments = arguments
        let input = Pipe()
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        input.fileHandleForWriting.write(Data((CLIFixtures.kdbx4Password + "\n").utf8))
        try input.fileHandleForWriting.close()
        return process
    }

    @Test("a signal during a long key derivation (Argon2, 64 MiB x 10,000 iterations: minutes) ends watch --once, merge and ls within seconds, with 128 + its number; the vault is untouched",
          arguments: [(["watch", "--once"], SIGTERM), (["merge"], SIGINT), (["ls"], SIGTERM)])
    func signalDuringDerivation(command: [String], signal: Int32) throws {
        let root = try CLIFixtures.scratch()
        defer { try? FileManager.default.removeItem(at: root) }
        let vault = root.appendingPathComponent("slow.kdbx").path
        let slow = try KDFBomb.made(from: Data(contentsOf: URL(fileURLWithPath: CLIFixtures.kdbx4)), memory: 64 << 20, iterations: 10_000)
        try slow.write(to: URL(fileURLWithPath: vault))
        let other = root.appendingPathComponent("other.kdbx").path
        try slow.write(to: URL(fileURLWithPath: other))
        let arguments = command + ["--password-stdin", "--state-dir", root.appendingPathComponent("state").path]
            + [vault] + (command == ["merge"] ? [other] : [])
        let process = try start(arguments)
        // Deriving: Argon2's 64 MiB are in memory (the first pass writes every block at once).
        waitUntil("the key derivation under way", timeout: 20) {
            !process.isRunning || Self.residentKiB(process.processIdentifier) >= 60 << 10
        }
        #expect(process.isRunning, "ended before the signal")
        let sent = Date()
        kill(process.processIdentifier, signal)
        _ = pollUntil(timeout: 20, interval: 0.05) { !process.isRunning }
        let took = Date().timeIntervalSince(sent)
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        #expect(took < 5, "\(command[0]): still running \(took) s after the signal")
        #expect(process.terminationReason == .exit && process.terminationStatus == 128 + signal,
                "\(command[0]): \(process.terminationReason) \(process.terminationStatus)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: vault)) == slow)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: root.path).filter { $0.hasPrefix(".mypass-sync-tmp-") }
        #expect(leftovers.isEmpty, "\(leftovers)")
    }
}

public import Foundation
#if canImport(Glibc)
internal import Glibc
#endif

/// Runs a program to completion with some standard input and captures what it prints.
public enum ProcessRunner {
    public struct Outcome: Sendable {
        public let status: Int32
        public let standardOutput: Data
        public let standardError: String

        /// Standard output as text.
        public var output: String { String(decoding: standardOutput, as: UTF8.self) }
    }

    /// The program was still running `seconds` after it started: it was killed (SIGKILL).
    public struct TimedOut: Error, CustomStringConvertible {
        public let program: String
        public let seconds: Double
        /// What it had written to standard error by then.
        public let standardError: String
        public var description: String { "\(program) did not finish within \(seconds) s (killed); standard error: \(standardError.suffix(2000))" }
    }

    /// Runs `executable arguments...` with `input` on standard input and `environment` added. With a
    /// `timeout`, a program still running that many seconds after it started is killed and `TimedOut` thrown.
    public static func run(
        _ executable: URL, _ arguments: [String], input: Data = Data(), environment: [String: String] = [:], directory: URL? = nil,
        timeout: Double? = nil
    ) throws -> Outcome {
        let process = Process()
        process.executableURL = executable
        if let directory { process.currentDirectoryURL = directory }
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let stdinPipe = Pipe(), stdoutPipe = Pipe(), stderrPipe = Pipe()
        process.standardInput = stdinPipe
        process.standardOutput = stdoutPipe
        process.standardError = stderrPipe
        try process.run()
        if let timeout {
            // Both pipes drained on threads of their own while the deadline runs.
            let output = OutputCollector(stdoutPipe.fileHandleForReading), errors = OutputCollector(stderrPipe.fileHandleForReading)
            stdinPipe.fileHandleForWriting.write(input)
            try stdinPipe.fileHandleForWriting.close()
            guard pollUntil(timeout: timeout, interval: 0.01, { !process.isRunning }) else {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                throw TimedOut(program: executable.lastPathComponent + " " + (arguments.first ?? ""), seconds: timeout,
                               standardError: String(decoding: errors.all(timeout: 1), as: UTF8.self))
            }
            process.waitUntilExit()
            return Outcome(status: process.terminationStatus, standardOutput: output.all(timeout: 5),
                           standardError: String(decoding: errors.all(timeout: 5), as: UTF8.self))
        }
        stdinPipe.fileHandleForWriting.write(input)
        try stdinPipe.fileHandleForWriting.close()
        // Drain both pipes before waiting, so a large output cannot block the child.
        let group = DispatchGroup()
        nonisolated(unsafe) var errorData = Data()
        DispatchQueue.global().async(group: group) {
            errorData = stderrPipe.fileHandleForReading.readDataToEndOfFile()
        }
        let outputData = stdoutPipe.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        return Outcome(status: process.terminationStatus, standardOutput: outputData,
                       standardError: String(decoding: errorData, as: UTF8.self))
    }
}

/// Tests/TestSupport/Helpers/unblocked.py: runs a program with no signal blocked (the test runner's
/// threads block most signals, and a child inherits that mask). `python3 unblockedHelper PROGRAM ARG...`.
public let unblockedHelper = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("Helpers/unblocked.py").path

public import Foundation

/// Runs a program to completion with some standard input and captures what it prints.
public enum ProcessRunner {
    public struct Outcome: Sendable {
        public let status: Int32
        public let standardOutput: Data
        public let standardError: String

        /// Standard output as text.
        public var output: String { String(decoding: standardOutput, as: UTF8.self) }
    }

    /// Runs `executable arguments...` with `input` on standard input and `environment` added.
    public static func run(
        _ executable: URL, _ arguments: [String], input: Data = Data(), environment: [String: String] = [:], directory: URL? = nil
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

import Foundation
import Testing
import TestSupport

/// `mypass-sync ARGUMENTS` stopped after 60 s (`timeout`), how long it took and, where
/// `/usr/bin/time` is installed, its peak resident memory.
struct BoundedRun {
    let status: Int32
    let standardOutput: String
    /// Standard error without the lines `/usr/bin/time` adds.
    let standardError: String
    let seconds: Double
    /// Peak resident memory in MB; nil without `/usr/bin/time`.
    let peakMegabytes: Double?

    private static let timeProgram = "/usr/bin/time"

    init(_ arguments: [String], input: String = "", environment: [String: String] = [:]) throws {
        let measuresMemory = FileManager.default.isExecutableFile(atPath: Self.timeProgram)
        let bounded = ["/usr/bin/timeout", "60", try ToolRunner.binary().path] + arguments
        let command = measuresMemory ? [Self.timeProgram, "-f", "peak-kb %M"] + bounded : bounded
        let started = Date()
        let outcome = try ProcessRunner.run(URL(fileURLWithPath: command[0]), Array(command.dropFirst()), input: Data(input.utf8),
                                            environment: ["XDG_STATE_HOME": ToolRunner.stateHome].merging(environment) { $1 })
        seconds = Date().timeIntervalSince(started)
        status = outcome.status
        standardOutput = outcome.output
        var errorLines = outcome.standardError.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var peak: Double?
        if measuresMemory, let last = errorLines.lastIndex(where: { $0.hasPrefix("peak-kb ") }) {
            peak = Double(errorLines[last].dropFirst("peak-kb ".count)).map { $0 / 1024 }
            errorLines.remove(at: last)
            errorLines.removeAll { $0.hasPrefix("Command exited with non-zero status") }
        }
        peakMegabytes = peak
        standardError = errorLines.joined(separator: "\n")
        if let leaked = SecretScan.firstSecret(in: standardOutput + standardError) {
            Issue.record("`mypass-sync \(arguments.first ?? "")` printed a secret (\(leaked.count) characters)")
        }
    }
}

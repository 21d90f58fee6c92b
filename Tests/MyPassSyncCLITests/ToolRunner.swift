import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing
import TestSupport

/// Runs the built `mypass-sync` binary the way a user or a script does, and captures what it prints.
struct ToolRunner {
    struct Outcome {
        let status: Int32
        let standardOutput: String
        let standardError: String
    }

    enum Failure: Error {
        case binaryNotFound([String])
    }

    /// The `mypass-sync` built beside this test bundle (or `MYPASS_SYNC_BINARY`).
    static func binary() throws -> URL {
        var candidates: [URL] = []
        if let explicit = ProcessInfo.processInfo.environment["MYPASS_SYNC_BINARY"] {
            candidates.append(URL(fileURLWithPath: explicit))
        }
        let testExecutable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = testExecutable.deletingLastPathComponent()
        // Walk up out of an .xctest bundle if the runner lives inside one.
        for _ in 0..<4 {
            candidates.append(directory.appendingPathComponent("mypass-sync"))
            directory = directory.deletingLastPathComponent()
        }
        candidates.append(Bundle.main.bundleURL.appendingPathComponent("mypass-sync"))
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            throw Failure.binaryNotFound(candidates.map(\.path))
        }
        return found
    }

    /// Runs `mypass-sync arguments...` with `input` on standard input and waits for it.
    /// Runs `Helpers/SCRIPT` (a Python helper that starts `mypass-sync arguments` itself) and decodes
    /// the JSON report it prints.
    static func helperReport<Report: Decodable>(
        _ script: String, _ helperArguments: [String], _ arguments: [String], input: String = ""
    ) throws -> Report {
        let helper = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Helpers/" + script)
        let outcome = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"),
                                            ["python3", helper.path] + helperArguments + [try binary().path] + arguments,
                                            input: Data(input.utf8))
        return try JSONDecoder().decode(Report.self, from: outcome.standardOutput)
    }

    /// A state directory of the test run's own, so that tests never touch the user's sync state.
    static let stateHome: String = {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("mypass-sync-test-state-\(getpid())").path
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }()

    /// Every run's standard output and error are scanned for the fixtures' secrets: only
    /// `export`, `show --reveal` and `match --reveal` may print them.
    static func run(_ arguments: [String], input: String = "", environment: [String: String] = [:]) throws -> Outcome {
        let outcome = try ProcessRunner.run(try binary(), arguments, input: Data(input.utf8),
                                            environment: ["XDG_STATE_HOME": stateHome].merging(environment) { $1 })
        let result = Outcome(status: outcome.status, standardOutput: outcome.output, standardError: outcome.standardError)
        let mayReveal = arguments.first == "export" || (["show", "match"].contains(arguments.first ?? "") && arguments.contains("--reveal"))
        if !mayReveal, let leaked = SecretScan.firstSecret(in: result.standardOutput + result.standardError) {
            Issue.record("`mypass-sync \(arguments.first ?? "")` printed a secret (\(leaked.count) characters, starts with \(leaked.prefix(2)))")
        }
        return result
    }
}

import Foundation
import Testing
import TestSupport

/// A copy of the KDBX 4 fixture vault (cheap KDF) in a fresh directory with its own sync state, and
/// the three ways the tests look at it: our command line, pykeepass and keepassxc-cli.
struct ScratchVault {
    let directory: URL
    let vault: String
    static let password = CLIFixtures.kdbx4Password

    init() throws {
        directory = try CLIFixtures.scratch()
        vault = directory.appendingPathComponent("vault.kdbx").path
        try FileManager.default.copyItem(atPath: CLIFixtures.kdbx4, toPath: vault)
    }

    /// The sync-state directory the commands are given.
    var stateDirectory: String { directory.appendingPathComponent("state").path }

    /// `mypass-sync arguments --password-stdin --state-dir …` with the vault password and `lines` on stdin.
    func run(_ arguments: [String], lines: [String] = [], environment: [String: String] = [:]) throws -> ToolRunner.Outcome {
        try ToolRunner.run(arguments + ["--password-stdin", "--state-dir", stateDirectory],
                           input: ([Self.password] + lines).map { $0 + "\n" }.joined(), environment: environment)
    }

    func bytes() throws -> Data { try Data(contentsOf: URL(fileURLWithPath: vault)) }

    /// The vault as pykeepass reads it.
    func pykeepassView() throws -> ReferenceTools.View {
        try ReferenceTools.view(.pykeepass, path: URL(fileURLWithPath: vault), password: Self.password, keyFile: nil)
    }

    /// The entry titled `title` as pykeepass reads it.
    func pykeepass(_ title: String) throws -> FixtureVault.Entry? {
        try pykeepassView().entries.first { $0.title == title }
    }

    /// `keepassxc-cli COMMAND -q ARGUMENTS…` with the vault password on stdin.
    func keepassxc(_ arguments: [String]) throws -> ProcessRunner.Outcome {
        try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), ["keepassxc-cli", arguments[0], "-q"] + arguments.dropFirst(),
                              input: Data((Self.password + "\n").utf8), environment: ["QT_QPA_PLATFORM": "offscreen"])
    }

    func remove() { try? FileManager.default.removeItem(at: directory) }

    /// `mypass-sync arguments --password-stdin --state-dir …` started in the background with the vault
    /// password on stdin; `environment` overrides entries of ours (nil removes one).
    func start(_ arguments: [String], environment: [String: String?] = [:]) throws -> Running {
        try Running(arguments + ["--password-stdin", "--state-dir", stateDirectory], environment: environment)
    }

    /// A `mypass-sync` run in the background: its process, and what it printed (so far, or once it ended).
    struct Running {
        let process: Process
        let output = Pipe(), errors = Pipe()
        private let printed: OutputCollector, problems: OutputCollector

        init(_ arguments: [String], environment overrides: [String: String?]) throws {
            process = Process()
            process.executableURL = try ToolRunner.binary()
            process.arguments = arguments
            var environment = ProcessInfo.processInfo.environment
            for (name, value) in overrides { environment[name] = value }
            process.environment = environment
            let input = Pipe()
            process.standardInput = input
            process.standardOutput = output
            process.standardError = errors
            printed = OutputCollector(output.fileHandleForReading)
            problems = OutputCollector(errors.fileHandleForReading)
            try process.run()
            input.fileHandleForWriting.write(Data((ScratchVault.password + "\n").utf8))
            try input.fileHandleForWriting.close()
        }

        /// Standard error so far (the process may still run).
        var errorsSoFar: String { problems.text }

        /// Waits for the end: exit status, standard output and standard error.
        func finish() -> (status: Int32, output: String, errors: String) {
            process.waitUntilExit()
            let text = String(decoding: printed.all(), as: UTF8.self)
            return (process.terminationStatus, text, String(decoding: problems.all(), as: UTF8.self))
        }
    }
}

extension ScratchVault {
    /// One command of a scene: its arguments and the lines after the vault password on stdin.
    typealias Edit = (arguments: [String], lines: [String])

    /// Where `diverge` puts the other device's copy.
    var otherCopy: String { directory.appendingPathComponent("other.kdbx").path }

    /// Copies the vault to `otherCopy`, runs `here`, then a second later (so that the other device's
    /// edits are newer) runs `there`; each command must succeed.
    func diverge(here: [Edit], there: [Edit]) throws {
        try FileManager.default.copyItem(atPath: vault, toPath: otherCopy)
        for edit in here { #expect(try run(edit.arguments, lines: edit.lines).status == 0, "\(edit.arguments)") }
        waitForNextClockSecond()  // the next edit is stamped a second later (KDBX times: whole seconds)
        for edit in there { #expect(try run(edit.arguments, lines: edit.lines).status == 0, "\(edit.arguments)") }
    }
}

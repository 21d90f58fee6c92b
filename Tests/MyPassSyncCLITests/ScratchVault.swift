import Foundation
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
}

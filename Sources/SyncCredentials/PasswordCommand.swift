public import Foundation
internal import SyncFiles
public import SyncCommit
public import MyPassCrypto

/// A program that prints the vault's password (`--password-command CMD`): run with `/bin/sh -c` as
/// git runs its credential helpers, the first line of its standard output is the password. It reads
/// nothing from this process (standard input is /dev/null), its error output is the user's, and the
/// password reaches neither an argument nor an environment variable of any process.
public struct PasswordCommand: Sendable {
    /// The shell command line as the user gave it.
    public let command: String
    /// How long the command may take, from its start to its exit (a prompt of its own included).
    public let timeout: TimeInterval

    public init(_ command: String, timeout: TimeInterval = 120) {
        self.command = command
        self.timeout = timeout
    }

    /// Why no password came: each names the command, never what it printed.
    public enum Failure: Error, CustomStringConvertible, Sendable {
        case failed(command: String, status: Int32)
        case noOutput(command: String)
        case timedOut(command: String, seconds: Int)
        case notStarted(command: String, reason: String)
        case printedTooMuch(command: String, limit: Int)

        public var description: String {
            switch self {
            case .failed(let command, let status): "the password command `\(command)` failed (exit status \(status)); no password"
            case .noOutput(let command): "the password command `\(command)` printed nothing; no password"
            case .timedOut(let command, let seconds): "the password command `\(command)` did not finish within \(seconds) s; stopped, no password"
            case .notStarted(let command, let reason): "the password command `\(command)` could not be started: \(reason)"
            case .printedTooMuch(let command, let limit):
                "the password command `\(command)` printed more than \(limit / 1024) KiB (a password is one line); stopped, no password"
            }
        }
    }

    /// Runs the command; the first line of what it printed (without its line ending). An empty
    /// first line is an empty password, as with `--password-stdin`.
    public func password() throws(Failure) -> SecureBytes {
        var output: Data
        let status: Int32
        do {
            (status, output) = try ShellCommand(command: command, timeout: timeout).run(input: nil)
        } catch is ShellCommand.TimedOut {
            throw .timedOut(command: command, seconds: Int(timeout))
        } catch is ShellCommand.PrintedTooMuch {
            throw .printedTooMuch(command: command, limit: ShellCommand.outputLimit)
        } catch {
            throw .notStarted(command: command, reason: "\(error)")
        }
        defer { output.resetBytes(in: 0..<output.count) }
        guard status == 0 else { throw .failed(command: command, status: status) }
        guard !output.isEmpty else { throw .noOutput(command: command) }
        var line = output.prefix { $0 != UInt8(ascii: "\n") }
        if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
        return SecureBytes(line)
    }
}

extension PasswordCommand.Failure: ClassifiedFailure {
    /// No password: wrong credentials (exit 3), as a password that does not open the vault.
    public var failureKind: FailureKind { .wrongCredentials }
}

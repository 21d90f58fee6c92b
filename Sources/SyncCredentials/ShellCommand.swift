internal import Foundation
internal import SyncFiles

/// A command line of the user's, run as git runs its helpers (`/bin/sh -c`, this process's
/// environment, its error output passed through to the user), in a process group of its own and
/// bounded: the whole run (its exit included) within `timeout`, its output within `outputLimit`;
/// past either it is killed with everything it started. What the password command and the
/// challenge-response command share.
struct ShellCommand {
    let command: String
    let timeout: TimeInterval
    /// Most output read: a password or a response is one short line.
    static let outputLimit = 64 << 10

    /// The command was still running after `timeout`: it was stopped.
    struct TimedOut: Error {}
    /// The command printed more than `outputLimit` bytes: it was stopped.
    struct PrintedTooMuch: Error {}

    /// Its exit status and what it printed, `input` on its standard input (nil: /dev/null).
    func run(input: Data?) throws -> (status: Int32, output: Data) {
        do {
            return try ChildProcess.run("/bin/sh", ["-c", command], environment: ProcessInfo.processInfo.environment,
                                        input: input, readingOutput: true, passingErrors: true,
                                        bounds: ChildProcess.Bounds(timeout: timeout, outputLimit: Self.outputLimit, ownProcessGroup: true))
        } catch is ChildProcess.TimedOut {
            throw TimedOut()
        } catch is ChildProcess.OutputTooLarge {
            throw PrintedTooMuch()
        }
    }
}

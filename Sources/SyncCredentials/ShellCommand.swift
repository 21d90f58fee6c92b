internal import Foundation
internal import SyncFiles

/// A command line of the user's, run as git runs its helpers (`/bin/sh -c`, this process's
/// environment, its error output passed through to the user), with a time limit: what the
/// password command and the challenge-response command share.
struct ShellCommand {
    let command: String
    let timeout: TimeInterval

    /// The command is still running after `timeout`: it was stopped.
    struct TimedOut: Error {}

    /// Its exit status and what it printed, `input` on its standard input (nil: /dev/null).
    func run(input: Data?) throws -> (status: Int32, output: Data) {
        do {
            return try ChildProcess.run("/bin/sh", ["-c", command], environment: ProcessInfo.processInfo.environment,
                                        input: input, readingOutput: true, passingErrors: true, timeout: timeout)
        } catch is ChildProcess.TimedOut {
            throw TimedOut()
        }
    }
}

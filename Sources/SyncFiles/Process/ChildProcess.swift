package import Foundation
internal import CProcess
#if canImport(Glibc)
internal import Glibc
#endif

/// Runs a helper program (a clipboard tool) with `posix_spawn`: the child starts with no signal
/// blocked and the default action for every signal this process handles itself, so that a helper
/// left running (a clipboard owner) can still be ended by SIGINT or SIGTERM. Its standard input is
/// `input` (or /dev/null), its standard output is read when asked (else /dev/null), its standard
/// error goes to /dev/null (or to ours when `passingErrors`), and no other descriptor is inherited.
package enum ChildProcess {
    /// Why a helper could not be run.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// The helper did not finish within `seconds`: it (and its process group, when it had one of
    /// its own) was killed.
    package struct TimedOut: Error {
        package let seconds: TimeInterval
    }

    /// The helper printed more than `limit` bytes: it was killed, what it printed is dropped.
    package struct OutputTooLarge: Error {
        package let limit: Int
    }

    /// How far a helper is trusted: the whole run (output and exit) within `timeout`, at most
    /// `outputLimit` bytes of output, and, with `ownProcessGroup`, the helper in a process group of
    /// its own, killed whole when a bound is crossed (a shell's children with it). A group of its own
    /// is handed the terminal while it runs when this process has it, so a prompt of its own works.
    package struct Bounds: Sendable {
        package var timeout: TimeInterval?
        package var outputLimit: Int?
        package var ownProcessGroup: Bool

        package init(timeout: TimeInterval? = nil, outputLimit: Int? = nil, ownProcessGroup: Bool = false) {
            self.timeout = timeout
            self.outputLimit = outputLimit
            self.ownProcessGroup = ownProcessGroup
        }
    }

    /// The exit status (128 + the signal number when a signal ended it) and what it wrote to its
    /// standard output when `readingOutput`. With a `timeout`, a helper still running then is killed
    /// (`TimedOut`).
    package static func run(_ executable: String, _ arguments: [String], environment: [String: String], input: Data?,
                    readingOutput: Bool, passingErrors: Bool = false, timeout: TimeInterval? = nil) throws -> (status: Int32, output: Data) {
        try run(executable, arguments, environment: environment, input: input, readingOutput: readingOutput, passingErrors: passingErrors,
                bounds: Bounds(timeout: timeout))
    }

    /// `run` within `bounds`.
    package static func run(_ executable: String, _ arguments: [String], environment: [String: String], input: Data?,
                            readingOutput: Bool, passingErrors: Bool = false, bounds: Bounds) throws -> (status: Int32, output: Data) {
        var inputPipe: [Int32] = [-1, -1], outputPipe: [Int32] = [-1, -1]
        guard input == nil || pipe(&inputPipe) == 0, !readingOutput || pipe(&outputPipe) == 0 else {
            throw Failure(description: "\(executable): pipe failed: \(String(cString: strerror(errno)))")
        }
        // Not inherited by anything else this process starts (the child gets its copies by dup2).
        for descriptor in inputPipe + outputPipe where descriptor >= 0 { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        defer { for descriptor in inputPipe + outputPipe where descriptor >= 0 { close(descriptor) } }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if input != nil {
            posix_spawn_file_actions_adddup2(&actions, inputPipe[0], STDIN_FILENO)
        } else {
            posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
        }
        if readingOutput {
            posix_spawn_file_actions_adddup2(&actions, outputPipe[1], STDOUT_FILENO)
        } else {
            posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0)
        }
        if !passingErrors { posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0) }
        // Nothing else is inherited: a descriptor without close-on-exec (a runtime's socket that tells a
        // parent its child ended, a caller's pipe) kept open by a helper that stays running would make
        // whoever waits on it wait for the helper.
        mypass_spawn_close_from(&actions, 3)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t(), defaults = sigset_t()
        sigemptyset(&noSignals)
        sigemptyset(&defaults)
        for number in [SIGINT, SIGTERM, SIGPIPE, SIGHUP] { sigaddset(&defaults, number) }
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF
        if bounds.ownProcessGroup {
            posix_spawnattr_setpgroup(&attributes, 0)
            flags |= POSIX_SPAWN_SETPGROUP
        }
        posix_spawnattr_setflags(&attributes, Int16(flags))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var child = pid_t()
        let spawned = posix_spawn(&child, executable, &actions, &attributes, argv, envp)
        guard spawned == 0 else { throw Failure(description: "\(executable): cannot start: \(String(cString: strerror(spawned)))") }
        let terminal = bounds.ownProcessGroup ? ForegroundTerminal.hand(to: child) : nil
        defer { terminal?.takeBack() }
        /// Ends the helper (its whole group when it has one) and collects it.
        func killHelper() {
            _ = bounds.ownProcessGroup ? Glibc.kill(-child, SIGKILL) : Glibc.kill(child, SIGKILL)
            var ignored: Int32 = 0
            while waitpid(child, &ignored, 0) < 0 && errno == EINTR {}
        }
        // Close the child's ends here, so that end of input and end of output are seen.
        if input != nil { close(inputPipe[0]); inputPipe[0] = -1 }
        if readingOutput { close(outputPipe[1]); outputPipe[1] = -1 }

        if let input {
            // A helper that stops reading early must give an exit status, not end this process.
            let previous = signal(SIGPIPE, SIG_IGN)
            defer { signal(SIGPIPE, previous) }
            input.withUnsafeBytes { buffer in
                var offset = 0
                while offset < buffer.count {
                    let written = write(inputPipe[1], buffer.baseAddress! + offset, buffer.count - offset)
                    if written < 0 && errno == EINTR { continue }
                    if written <= 0 { break }
                    offset += written
                }
            }
            close(inputPipe[1])
            inputPipe[1] = -1
        }
        var output = Data()
        let deadline = bounds.timeout.map { Date().addingTimeInterval($0) }
        /// Milliseconds left before the deadline (-1: none), or nil when it has passed.
        func remaining() -> Int32? {
            guard let deadline else { return -1 }
            let left = deadline.timeIntervalSinceNow
            return left > 0 ? Int32(min(left, 3600) * 1000) + 1 : nil
        }
        if readingOutput {
            var chunk = [UInt8](repeating: 0, count: 64 << 10)
            defer { chunk.withUnsafeMutableBytes { _ = memset($0.baseAddress!, 0, $0.count) } }
            while true {
                guard let wait = remaining() else {
                    killHelper()
                    throw TimedOut(seconds: bounds.timeout ?? 0)
                }
                var poller = pollfd(fd: outputPipe[0], events: Int16(POLLIN), revents: 0)
                let waited = poll(&poller, 1, wait)
                if waited < 0 && errno == EINTR { continue }
                if waited == 0 { continue }  // the deadline is checked above
                let count = read(outputPipe[0], &chunk, chunk.count)
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                if let limit = bounds.outputLimit, output.count + count > limit {
                    output.resetBytes(in: 0..<output.count)
                    killHelper()
                    throw OutputTooLarge(limit: limit)
                }
                output.append(contentsOf: chunk[..<count])
            }
        }
        // The helper may close its output and go on running: its exit is waited for within the deadline too.
        var status: Int32 = 0
        while true {
            let ended = waitpid(child, &status, deadline == nil ? 0 : WNOHANG)
            if ended == child { break }
            if ended < 0 {
                guard errno == EINTR else { throw Failure(description: "\(executable): waitpid failed: \(String(cString: strerror(errno)))") }
                continue
            }
            guard remaining() != nil else {
                output.resetBytes(in: 0..<output.count)
                killHelper()
                throw TimedOut(seconds: bounds.timeout ?? 0)
            }
            usleep(10_000)
        }
        let exited = status & 0x7F == 0
        return (exited ? (status >> 8) & 0xFF : 128 + (status & 0x7F), output)
    }
}

/// The terminal this process has in the foreground, handed to a helper's own process group while
/// it runs (so a prompt of its own can read it) and taken back after, as a shell does.
private struct ForegroundTerminal {
    let descriptor: Int32

    /// Gives the terminal to `child`'s group when this process's group has it in the foreground; nil otherwise.
    static func hand(to child: pid_t) -> ForegroundTerminal? {
        let descriptor = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        guard tcgetpgrp(descriptor) == getpgrp() else {
            close(descriptor)
            return nil
        }
        let previous = signal(SIGTTOU, SIG_IGN)
        defer { signal(SIGTTOU, previous) }
        _ = tcsetpgrp(descriptor, child)
        // The helper may have touched the terminal before it was handed over, and been stopped.
        _ = kill(-child, SIGCONT)
        return ForegroundTerminal(descriptor: descriptor)
    }

    /// Gives the terminal back to this process's group.
    func takeBack() {
        let previous = signal(SIGTTOU, SIG_IGN)
        _ = tcsetpgrp(descriptor, getpgrp())
        signal(SIGTTOU, previous)
        close(descriptor)
    }
}

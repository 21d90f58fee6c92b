#if canImport(Glibc)
import Glibc
#endif
internal import Foundation
internal import MyPassCrypto
internal import Synchronization

/// Where passwords come from: standard input lines (`--password-stdin`) or a prompt on the terminal
/// with echo off. Never argv, never the environment.
enum PasswordInput {
    /// Reads one line from standard input (without its line ending); nil at end of input. Reads in
    /// 64 KiB blocks into one buffer of the process (every line of standard input is read here, and
    /// a child process gets its own): a 10 MB value costs one pass, not a system call per byte.
    /// Every copy of a line's bytes is wiped once it is handed over.
    static func readStandardInputLine() -> SecureBytes? {
        StandardInputLines.shared.next()
    }

    /// Prompts on the controlling terminal with echo off and reads one line. Restores the terminal
    /// afterwards, and on Ctrl-C before exiting. Nil when there is no terminal.
    static func prompt(_ text: String) -> SecureBytes? {
        let terminal = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard terminal >= 0 else { return nil }
        defer { close(terminal) }
        var settings = termios()
        guard tcgetattr(terminal, &settings) == 0 else { return nil }
        TerminalRestore.save(descriptor: terminal, settings: settings)
        var silent = settings
        silent.c_lflag &= ~tcflag_t(ECHO)
        silent.c_lflag |= tcflag_t(ICANON)
        _ = tcsetattr(terminal, TCSAFLUSH, &silent)
        let previousHandler = signal(SIGINT, TerminalRestore.interruptHandler)
        // A parent may have started us with SIGINT blocked: Ctrl-C must still end the prompt.
        var interrupt = sigset_t()
        var previousMask = sigset_t()
        sigemptyset(&interrupt)
        sigaddset(&interrupt, SIGINT)
        pthread_sigmask(SIG_UNBLOCK, &interrupt, &previousMask)
        defer {
            pthread_sigmask(SIG_SETMASK, &previousMask, nil)
            _ = tcsetattr(terminal, TCSAFLUSH, &settings)
            signal(SIGINT, previousHandler)
            TerminalRestore.clear()
        }
        _ = text.withCString { write(terminal, $0, strlen($0)) }
        var collected = [UInt8]()
        defer { MemoryMask.wipe(&collected) }
        var byte: UInt8 = 0
        while true {
            let count = read(terminal, &byte, 1)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 || byte == UInt8(ascii: "\n") { break }
            collected.append(byte)
        }
        byte = 0
        _ = write(terminal, "\n", 1)
        return SecureBytes(collected)
    }
}

/// The terminal state to put back when Ctrl-C (or a shutdown signal) interrupts a password prompt.
enum TerminalRestore {
    nonisolated(unsafe) static var descriptor: Int32 = -1
    nonisolated(unsafe) static var saved = termios()

    static func save(descriptor: Int32, settings: termios) {
        saved = settings
        self.descriptor = descriptor
    }

    static func clear() { descriptor = -1 }

    /// Restores echo and prints a newline when a prompt is showing.
    static func restore() {
        if TerminalRestore.descriptor >= 0 {
            _ = tcsetattr(TerminalRestore.descriptor, TCSAFLUSH, &TerminalRestore.saved)
            _ = write(TerminalRestore.descriptor, "\n", 1)
        }
    }

    /// Restores echo, prints a newline and exits with the conventional 128 + SIGINT.
    static let interruptHandler: @convention(c) (Int32) -> Void = { _ in
        TerminalRestore.restore()
        _exit(130)
    }
}

/// The buffered lines of standard input (`PasswordInput.readStandardInputLine`).
private final class StandardInputLines: Sendable {
    static let shared = StandardInputLines()

    private struct Buffer {
        /// Read but not yet handed over; wiped as it is consumed.
        var pending: [UInt8] = []
        var ended = false

        mutating func next() -> SecureBytes? {
            var searched = 0
            while true {
                if let newline = pending[searched...].firstIndex(of: UInt8(ascii: "\n")) {
                    return take(through: newline, dropping: 1)
                }
                searched = pending.count
                if ended { return pending.isEmpty ? nil : take(through: pending.count, dropping: 0) }
                var block = [UInt8](repeating: 0, count: 64 << 10)
                let count = read(STDIN_FILENO, &block, block.count)
                if count < 0 && errno == EINTR { continue }
                if count <= 0 {
                    ended = true
                } else {
                    pending.append(contentsOf: block[0..<count])
                }
                MemoryMask.wipe(&block)
            }
        }

        /// The bytes before `end` as a line (a trailing CR dropped), removing them and `dropping` more.
        private mutating func take(through end: Int, dropping: Int) -> SecureBytes {
            var lineEnd = end
            if lineEnd > 0 && pending[lineEnd - 1] == UInt8(ascii: "\r") { lineEnd -= 1 }
            let line = pending.withUnsafeBufferPointer { SecureBytes(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer($0)[0..<lineEnd])) }
            let rest = Array(pending[(end + dropping)...])
            MemoryMask.wipe(&pending)
            pending = rest
            return line
        }
    }

    private let buffer = Mutex(Buffer())

    func next() -> SecureBytes? {
        buffer.withLock { $0.next() }
    }
}

#if canImport(Glibc)
import Glibc
#endif
internal import MyPassCrypto

/// Where passwords come from: standard input lines (`--password-stdin`) or a prompt on the terminal
/// with echo off. Never argv, never the environment.
enum PasswordInput {
    /// Reads one line from standard input (without its line ending); nil at end of input.
    /// Reads byte by byte so that later lines stay available for later reads.
    static func readStandardInputLine() -> SecureBytes? {
        var line = SecureBytes(count: 0)
        var byte: UInt8 = 0
        var sawAnything = false
        var chunk = [UInt8]()
        defer { MemoryMask.wipe(&chunk) }
        while true {
            let count = read(STDIN_FILENO, &byte, 1)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            sawAnything = true
            if byte == UInt8(ascii: "\n") { break }
            chunk.append(byte)
            if chunk.count >= 4096 {
                line = line.appending(chunk)
                MemoryMask.wipe(&chunk)
                chunk.removeAll(keepingCapacity: true)
            }
        }
        byte = 0
        guard sawAnything else { return nil }
        if chunk.last == UInt8(ascii: "\r") { chunk.removeLast() }
        return line.appending(chunk)
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

/// The terminal state to put back when Ctrl-C interrupts a password prompt.
private enum TerminalRestore {
    nonisolated(unsafe) static var descriptor: Int32 = -1
    nonisolated(unsafe) static var saved = termios()

    static func save(descriptor: Int32, settings: termios) {
        saved = settings
        self.descriptor = descriptor
    }

    static func clear() { descriptor = -1 }

    /// Restores echo, prints a newline and exits with the conventional 128 + SIGINT.
    static let interruptHandler: @convention(c) (Int32) -> Void = { _ in
        if TerminalRestore.descriptor >= 0 {
            _ = tcsetattr(TerminalRestore.descriptor, TCSAFLUSH, &TerminalRestore.saved)
            _ = write(TerminalRestore.descriptor, "\n", 1)
        }
        _exit(130)
    }
}

#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// One updating line on standard error for work that takes seconds (opening, merging and saving big
/// vaults): each `show` replaces the line, `clear` removes it. Silent when standard error is not a
/// terminal (a script, a log) or with `--quiet`, so nothing but results and errors reach a pipe.
/// Merge phases report from worker threads: the line's state and its writes are behind one lock.
final class ProgressLine: Sendable {
    private let enabled: Bool
    /// Whether a line is on the terminal now.
    private let shown = Mutex(false)

    /// A line on standard error when it is a terminal and `quiet` is off.
    init(quiet: Bool) {
        enabled = !quiet && isatty(STDERR_FILENO) == 1
    }

    /// Replaces the line with `text` (cut to the terminal's width).
    func show(_ text: String) {
        guard enabled else { return }
        var size = winsize()
        let columns = ioctl(STDERR_FILENO, UInt(TIOCGWINSZ), &size) == 0 && size.ws_col > 1 ? Int(size.ws_col) - 1 : 79
        shown.withLock { shown in
            write("\r\u{1B}[2K" + String(text.terminalSafe.prefix(columns)))
            shown = true
        }
    }

    /// Removes the line.
    func clear() {
        shown.withLock { shown in
            guard shown else { return }
            write("\r\u{1B}[2K")
            shown = false
        }
    }

    private func write(_ text: String) {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(STDERR_FILENO, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return }
            offset += written
        }
    }

    deinit { clear() }
}

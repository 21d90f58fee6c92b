#if canImport(Glibc)
import Glibc
#endif

/// Where the tool writes: standard output for results and help, standard error for diagnostics.
/// Writes go straight to file descriptors 1 and 2, unbuffered, retrying short writes and EINTR.
struct StandardStreams {
    /// Writes `text` (plus a newline unless it ends with one) to standard output.
    mutating func print(_ text: String) {
        write(text, to: STDOUT_FILENO)
    }

    /// Writes `text` (plus a newline unless it ends with one) to standard error.
    mutating func printError(_ text: String) {
        write(text, to: STDERR_FILENO)
    }

    private func write(_ text: String, to descriptor: Int32) {
        var bytes = Array((text.hasSuffix("\n") ? text : text + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { buffer in
                Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
            }
            if written < 0 {
                if errno == EINTR { continue }
                return  // Nowhere left to report a failing standard stream.
            }
            offset += written
        }
    }
}

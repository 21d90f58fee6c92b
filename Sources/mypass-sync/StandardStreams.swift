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

    /// Writes `text` to standard output as it is (a piece of a longer output).
    mutating func emit(_ text: String) {
        write(text, to: STDOUT_FILENO, newline: false)
    }

    /// Writes `text` (plus a newline unless it ends with one) to standard error.
    mutating func printError(_ text: String) {
        write(text, to: STDERR_FILENO)
    }

    /// Writes `bytes` to standard output as they are (a piece of a longer output, maybe mid-character).
    mutating func emit(bytes: UnsafeRawBufferPointer) {
        write(Array(bytes), to: STDOUT_FILENO)
    }

    private func write(_ text: String, to descriptor: Int32, newline: Bool = true) {
        write(Array((!newline || text.hasSuffix("\n") ? text : text + "\n").utf8), to: descriptor)
    }

    private func write(_ bytes: [UInt8], to descriptor: Int32) {
        var bytes = bytes
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

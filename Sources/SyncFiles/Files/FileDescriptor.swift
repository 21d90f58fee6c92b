#if canImport(Glibc)
internal import Glibc
#endif

/// An open file descriptor with one owner that closes it exactly once: when it goes out of scope,
/// or by `close()` where the result matters (a written file whose close fails was not written).
/// Every descriptor of this target is one of these, opened and closed through `SystemCalls`.
package struct FileDescriptor: ~Copyable, Sendable {
    /// The number, for the system calls that take one (never closed by anyone else).
    package let raw: Int32

    /// Takes ownership of `raw`; nil when the open that returned it failed (`errno` is kept).
    init?(_ raw: Int32) {
        guard raw >= 0 else { return nil }
        self.raw = raw
    }

    /// Closes now; 0, or -1 with `errno` set.
    consuming func close() -> Int32 {
        let result = SystemCalls.close(raw)
        discard self
        return result
    }

    deinit {
        _ = SystemCalls.close(raw)
    }
}

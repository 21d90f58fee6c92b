#if canImport(Glibc)
internal import Glibc
#endif

/// An open file descriptor with one owner that closes it exactly once: when it goes out of scope,
/// or by `close()` where the result matters (a written file whose close fails was not written).
/// Every descriptor of this target is one of these, opened and closed through `SystemCalls` on the
/// `FileSystem` it was opened on.
package struct FileDescriptor: ~Copyable, Sendable {
    /// The number, for the system calls that take one (never closed by anyone else).
    package let raw: Int32
    /// The fault plan of the file system it was opened on (nil: the real one), retained here and
    /// released when it is closed: `Unmanaged` keeps this type trivially destroyed, which `discard`
    /// requires.
    private let faults: Unmanaged<FaultPlan>?
    /// The shutdown gate of that file system, retained and released likewise.
    private let shutdownGate: Unmanaged<ShutdownGate>

    /// Takes ownership of `raw`, opened as `path` on `fileSystem`; nil when the open that returned it
    /// failed (`errno` is kept).
    init?(_ raw: Int32, path: String?, on fileSystem: FileSystem) {
        guard raw >= 0 else { return nil }
        self.raw = raw
        faults = fileSystem.faults.map { Unmanaged.passRetained($0) }
        shutdownGate = Unmanaged.passRetained(fileSystem.shutdownGate)
        faults?.takeUnretainedValue().remember(raw, path: path)
    }

    /// The file system it was opened on: its later calls (write, fsync, close) go there too.
    var fileSystem: FileSystem { FileSystem(faults: faults?.takeUnretainedValue(), shutdownGate: shutdownGate.takeUnretainedValue()) }

    /// The path it was opened by, where the file system keeps it (for fault matching).
    var path: String? { faults?.takeUnretainedValue().path(of: raw) }

    /// Closes now; 0, or -1 with `errno` set.
    consuming func close() -> Int32 {
        let result = Self.close(raw, faults, shutdownGate)
        discard self
        return result
    }

    deinit {
        _ = Self.close(raw, faults, shutdownGate)
    }

    private static func close(_ raw: Int32, _ faults: Unmanaged<FaultPlan>?, _ gate: Unmanaged<ShutdownGate>) -> Int32 {
        defer {
            faults?.release()
            gate.release()
        }
        let plan = faults?.takeUnretainedValue()
        let path = plan?.path(of: raw)
        plan?.forget(raw)
        return SystemCalls.close(raw, path: path, on: FileSystem(faults: plan, shutdownGate: gate.takeUnretainedValue()))
    }
}

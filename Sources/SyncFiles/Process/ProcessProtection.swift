internal import CProcess
#if canImport(Glibc)
internal import Glibc
#endif

/// Protections a process holding secrets applies at start.
public enum ProcessProtection {
    /// Turns core dumps off and makes the process non-dumpable, so that a crash or another process of
    /// the same user cannot copy keys and passwords out of memory. Returns whether both took effect.
    @discardableResult
    public static func disableCoreDumps() -> Bool {
        mypass_disable_core_dumps() == 0
    }

    /// Hands the crash signals back to the kernel's default action (terminate; with core dumps off,
    /// no dump). The Swift runtime's backtracer would otherwise print registers and the memory they
    /// point to on standard error, which a systemd unit sends to the journal: a crash must never
    /// write memory contents (keys, passwords) to a log.
    public static func disableCrashBacktraces() {
        for crash in [SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGABRT] { signal(crash, SIG_DFL) }
    }

    /// Whether the process can still be dumped (false once `disableCoreDumps` ran).
    public static var isDumpable: Bool { mypass_is_dumpable() != 0 }
}

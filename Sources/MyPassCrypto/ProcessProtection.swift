internal import CProcess

/// Protections a process holding secrets applies at start.
public enum ProcessProtection {
    /// Turns core dumps off and makes the process non-dumpable, so that a crash or another process of
    /// the same user cannot copy keys and passwords out of memory. Returns whether both took effect.
    @discardableResult
    public static func disableCoreDumps() -> Bool {
        mypass_disable_core_dumps() == 0
    }

    /// Whether the process can still be dumped (false once `disableCoreDumps` ran).
    public static var isDumpable: Bool { mypass_is_dumpable() != 0 }
}

internal import Dispatch

/// Frees large values (a parsed vault: tens of thousands of objects) on a background thread, so that
/// the thread that finished with them goes on at once. Freeing a 10,000-entry vault one object at a
/// time takes about 0.1 s; on a save or a watcher's reaction that time is on the critical path.
public enum DeferredRelease {
    private static let queue = DispatchQueue(label: "mypass.deferred-release", qos: .utility)

    /// Takes the caller's last reference to `value` and drops it on the background queue. The caller
    /// must not keep another reference it still uses from another thread (values here are immutable
    /// model values or objects the caller is done with).
    public static func drop<Value>(_ value: consuming Value) {
        let box = UncheckedBox(value)
        queue.async { _ = box }
    }

    /// Waits until everything handed over so far is freed (tests and memory measurements).
    public static func drain() {
        queue.sync {}
    }

    /// Moves a value to the queue's thread; nothing reads it there, it is only freed.
    private final class UncheckedBox<Value>: @unchecked Sendable {
        let value: Value
        init(_ value: consuming Value) { self.value = value }
    }
}

/// Values a command-line process needs until it exits: kept, never freed one object at a time (the
/// system reclaims the whole address space at exit, which costs nothing).
public enum ProcessLifetime {
    nonisolated(unsafe) private static var kept: [Any] = []

    /// Keeps `value` alive until the process exits. Call from the main thread only.
    public static func keepUntilExit(_ value: Any) {
        kept.append(value)
    }
}

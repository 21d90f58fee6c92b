internal import Dispatch

/// Frees large values (a parsed vault: tens of thousands of objects) on a background thread, so that
/// the thread that finished with them goes on at once. Freeing a 10,000-entry vault one object at a
/// time takes about 0.1 s; on a save or a watcher's reaction that time is on the critical path.
///
/// A process that ends after one job (every command but `watch`) sets `keepsUntilExit`: then nothing
/// is freed object by object at all (the system reclaims the address space at exit, at no cost), and
/// no background freeing competes for the cores with the job's remaining work.
public enum DeferredRelease {
    private static let queue = DispatchQueue(label: "mypass.deferred-release", qos: .utility)
    nonisolated(unsafe) private static var keepsValues = false

    /// Set once, at process start, before any other thread runs.
    public static var keepsUntilExit: Bool {
        get { keepsValues }
        set { keepsValues = newValue }
    }

    /// Takes the caller's last reference to `value` and drops it on the background queue (or keeps it
    /// until exit). The caller must not keep another reference it still uses from another thread
    /// (values here are immutable model values or objects the caller is done with).
    public static func drop<Value>(_ value: consuming Value) {
        if keepsValues {
            ProcessLifetime.keepUntilExit(value)
            return
        }
        let box = UncheckedBox(value)
        queue.async { _ = box }
    }

    /// Takes the caller's last reference to working tables whose contents belong to values still in
    /// use (a merge's indexes of the vaults it merged) and drops it on the background queue, even in a
    /// process that keeps values until exit: freeing them only drops references (a few milliseconds
    /// at 100,000 entries), and the memory they free (about a quarter of a merge's peak at that size)
    /// is then there for the save that follows.
    public static func dropTables<Value>(_ value: consuming Value) {
        let box = UncheckedBox(value)
        queue.async { _ = box }
    }

    /// Waits until everything handed over so far is freed (tests and memory measurements).
    public static func drain() {
        queue.sync {}
    }

    /// Moves a value to the queue's thread to be freed there.
    /// Unchecked: the queue's thread never reads the value, it only drops the last reference (the caller gave up its own).
    private final class UncheckedBox<Value>: @unchecked Sendable {
        let value: Value
        init(_ value: consuming Value) { self.value = value }
    }
}

/// Values a command-line process needs until it exits: kept, never freed one object at a time (the
/// system reclaims the whole address space at exit, which costs nothing).
enum ProcessLifetime {
    private static let lock = DispatchQueue(label: "mypass.process-lifetime")
    nonisolated(unsafe) private static var kept: [Any] = []

    /// Keeps `value` alive until the process exits (from any thread).
    static func keepUntilExit(_ value: Any) {
        lock.sync { kept.append(value) }
    }
}

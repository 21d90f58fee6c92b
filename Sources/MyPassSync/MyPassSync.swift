/// MyPassSync is the I/O side of the engine: vault files with durable compare-and-swap saves, the
/// per-device sync state (the merge base), the watcher and the reload / overwrite / merge decisions.
public enum MyPassSync {
    /// Directory name of the sync state under `$XDG_STATE_HOME`.
    public static let stateDirectoryName = "mypass-sync"
}

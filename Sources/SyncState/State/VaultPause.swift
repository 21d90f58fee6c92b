public import Foundation
public import SyncFiles
#if canImport(Glibc)
internal import Glibc
#endif

/// A person's pause of a vault in the daemon, kept in the state directory until they resume it: a
/// daemon restarted after a crash (systemd restarts it on failure) or a reboot keeps the vault
/// paused, silently, instead of watching it again.
public struct VaultPause: Sendable {
    /// The state directory.
    public let state: SyncStateStore
    /// The vault paused.
    public let vaultPath: String

    /// The pause of the vault at `vaultPath`.
    public init(state: SyncStateStore, vaultPath: String) {
        self.state = state
        self.vaultPath = vaultPath
    }

    private var file: String { state.stem(for: vaultPath) + ".paused" }

    /// Whether the vault is paused (a mark of this user's in the private state directory).
    public var isPaused: Bool {
        SystemCalls.status(atPath: file, on: state.fileSystem) != nil
    }

    /// Pauses the vault (durably: the mark is in place before the daemon says it is paused).
    public func pause() throws {
        try state.prepare()
        _ = try DurableFile.replace(atPath: file, on: state.fileSystem, with: Data("paused by a person; `mypass-sync daemon resume` ends it\n".utf8),
                                    policy: .anything)
    }

    /// Ends the pause.
    public func resume() throws {
        guard isPaused else { return }
        let (directory, name) = try DirectoryHandle.parent(of: file, on: state.fileSystem)
        guard SystemCalls.unlink(name, in: directory) == 0 || errno == ENOENT else {
            throw FileError.system(operation: .write, path: file, errno: errno, message: String(cString: strerror(errno)))
        }
    }
}

public import Foundation
public import SyncFiles
#if canImport(Glibc)
internal import Glibc
#endif

/// Conflict copies that could not be merged, remembered in the state directory as they were then
/// (inode, size, modification time) with why, so that a later run — `watch --once` from a timer —
/// does not open an unchanged one again: a planted copy with a costly KDF would cost its whole
/// derivation on every run. A copy that changed is tried again. Every failed copy still present
/// is remembered (no fixed count a folder of planted copies could exceed): the watcher forgets those
/// that left the folder, so the list is bounded by the files there.
public struct FailedCopies: Sendable {
    /// The largest list read back (about 300,000 copies).
    static let fileLimit: Int64 = 64 << 20

    /// One copy that failed.
    public struct Failure: Codable, Sendable, Equatable {
        /// The copy's inode, size and modification time when it failed.
        public let inode: UInt64
        public let size: Int64
        public let modified: FileTime
        /// Why it could not be merged (the fold's result, e.g. `otherCredentials`).
        public let reason: String

        /// A failure of a copy as it was then.
        public init(inode: UInt64, size: Int64, modified: FileTime, reason: String) {
            self.inode = inode
            self.size = size
            self.modified = modified
            self.reason = reason
        }
    }

    /// The state directory.
    public let state: SyncStateStore
    /// The vault the copies are copies of.
    public let vaultPath: String

    /// The failed copies of the vault at `vaultPath`.
    public init(state: SyncStateStore, vaultPath: String) {
        self.state = state
        self.vaultPath = vaultPath
    }

    private var file: String { state.stem(for: vaultPath) + ".failed-copies.json" }

    /// The remembered failures by copy path (none when nothing is remembered or the file is unreadable).
    public func load() -> [String: Failure] {
        guard let data = try? FileReading.readAll(atPath: file, on: state.fileSystem, followSymlinks: false, limit: Self.fileLimit),
              let failures = try? JSONDecoder().decode([String: Failure].self, from: data) else { return [:] }
        return failures
    }

    /// Remembers exactly `failures` (a best effort: forgetting costs one more open).
    public func save(_ failures: [String: Failure]) {
        guard let data = try? JSONEncoder().encode(failures), (try? state.prepare()) != nil else { return }
        _ = try? DurableFile.replace(atPath: file, on: state.fileSystem, with: data, policy: .anything, durable: false)
    }
}

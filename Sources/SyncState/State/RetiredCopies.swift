public import Foundation
public import SyncFiles
#if canImport(Glibc)
internal import Glibc
#endif

/// Conflict copies this device has merged (or found to carry nothing new), kept on this device
/// outside the synced folder: in the sync state directory, one 0700 folder per vault, each copy 0600
/// under `<unix time>-<its name in the folder>`. A copy moved anywhere inside the synced folder would
/// be shipped to every device again; kept here it costs nothing to the others. Bounded: the newest
/// `maximumCount` per vault, none older than `maximumAge`.
public struct RetiredCopies: Sendable {
    /// How many retired copies are kept per vault.
    public static let maximumCount = 50
    /// How long a retired copy is kept.
    public static let maximumAge: TimeInterval = 90 * 24 * 3600

    /// One kept copy.
    public struct Copy: Sendable, Encodable, Equatable {
        /// Where it is kept now.
        public let path: String
        /// Its name in the synced folder.
        public let originalName: String
        /// When it was retired.
        public let retired: Date
        /// The copy's size in bytes.
        public let size: Int
    }

    /// The state directory the copies are kept in.
    public let state: SyncStateStore
    /// The vault the copies belong to.
    public let vaultPath: String

    /// The kept copies of the vault at `vaultPath`.
    public init(state: SyncStateStore, vaultPath: String) {
        self.state = state
        self.vaultPath = vaultPath
    }

    /// The folder of this vault's retired copies.
    public var folder: String { state.stem(for: vaultPath) + ".merged-copies" }

    /// Stores `bytes` (the copy named `name` in the synced folder) durably; returns where. Old copies
    /// beyond the retention are removed.
    public func store(_ bytes: Data, originalName name: String, at time: Date = Date()) throws(FileError) -> String {
        try state.prepare()
        let directory = try DirectoryHandle.privateDirectory(folder, on: state.fileSystem)
        var kept = "\(Int(time.timeIntervalSince1970))-" + name
        var counter = 1
        while directory.status(of: kept) != nil {
            kept = "\(Int(time.timeIntervalSince1970))-\(counter)-" + name
            counter += 1
        }
        do {
            _ = try DurableFile.replace(kept, in: directory, with: bytes, policy: .onlyIf(nil))
        } catch {
            if case .file(let fileError) = error { throw fileError }
            throw .system(operation: .write, path: directory.pathOf(kept), errno: EIO, message: error.description)
        }
        prune(in: directory, now: time)
        return directory.pathOf(kept)
    }

    /// The kept copies, newest first.
    public func list() -> [Copy] {
        guard let directory = try? DirectoryHandle(opening: folder, on: state.fileSystem) else { return [] }
        return list(in: directory)
    }

    private func list(in directory: DirectoryHandle) -> [Copy] {
        var copies: [Copy] = []
        for name in directory.names() where !name.hasPrefix(DurableFile.temporaryPrefix) {
            guard let status = directory.status(of: name), status.isRegularFile,
                  let dash = name.firstIndex(of: "-"), let seconds = Int(name[..<dash]) else { continue }
            var original = String(name[name.index(after: dash)...])
            // `<time>-<n>-<name>` when two copies of one name were retired in the same second.
            if let second = original.firstIndex(of: "-"), Int(original[..<second]) != nil {
                original = String(original[original.index(after: second)...])
            }
            copies.append(Copy(path: directory.pathOf(name), originalName: original, retired: Date(timeIntervalSince1970: Double(seconds)),
                               size: Int(status.size)))
        }
        return copies.sorted { ($0.retired, $0.path) > ($1.retired, $1.path) }
    }

    /// Removes copies older than `maximumAge` and all but the newest `maximumCount`.
    private func prune(in directory: DirectoryHandle, now: Date) {
        for (index, copy) in list(in: directory).enumerated()
        where index >= Self.maximumCount || now.timeIntervalSince(copy.retired) > Self.maximumAge {
            _ = SystemCalls.unlink(PathText.name(of: copy.path), in: directory)
        }
    }
}

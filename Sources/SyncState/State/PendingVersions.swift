public import Foundation
public import SyncFiles
internal import MyPassCrypto
#if canImport(Glibc)
internal import Glibc
#endif

/// Versions of a vault this device wrote or took in that the vault on disk may not hold yet, kept in
/// the sync state (never in the synced folder) until a later version is known to contain them.
///
/// A sync engine may overwrite, delete or never deliver the conflict copy that holds this device's
/// version (Syncthing keeps one of two same-named copies made in the same second by two devices that
/// lost to the same third one): the device where an edit was made is the only place that can
/// guarantee it survives. Each version the remembered base replaces goes here unless the caller knows
/// the new base contains it; the watcher merges a pending version into the vault when the vault
/// lacks its content (without a recorded deletion) and retires it once the vault holds it.
///
/// One 0700 folder per vault, files 0600 named by the SHA-256 of their bytes (the same version kept
/// twice is one file). Bounded: the newest `maximumCount`, none older than `maximumAge`.
public struct PendingVersions: Sendable {
    /// How many pending versions are kept per vault (older ones beyond it are dropped).
    public static let maximumCount = 16
    /// How long a pending version is kept.
    public static let maximumAge: TimeInterval = 30 * 24 * 3600

    /// One kept version.
    public struct Version: Sendable, Equatable {
        /// The SHA-256 (hex) of its bytes: its identity.
        public let sha256: String
        /// Where it is kept.
        public let path: String
        /// When it was kept.
        public let kept: Date
    }

    /// The state directory the versions are kept in.
    public let state: SyncStateStore
    /// The vault they are versions of.
    public let vaultPath: String

    /// The pending versions of the vault at `vaultPath`.
    public init(state: SyncStateStore, vaultPath: String) {
        self.state = state
        self.vaultPath = vaultPath
    }

    /// The folder of this vault's pending versions.
    public var folder: String { state.stem(for: vaultPath) + ".pending" }

    /// Keeps `bytes` until a version of the vault is known to contain them; beyond the retention the
    /// oldest go.
    public func add(_ bytes: Data, at time: Date = Date()) throws(FileError) {
        try state.prepare()
        let directory = try DirectoryHandle.privateDirectory(folder, on: state.fileSystem)
        let sha256 = SHA256.hexHash(bytes)
        if list(in: directory).contains(where: { $0.sha256 == sha256 }) { return }
        let name = Self.fileName(sha256: sha256, kept: time)
        do {
            _ = try DurableFile.replace(name, in: directory, with: bytes, policy: .anything, durable: false)
        } catch {
            if case .file(let fileError) = error { throw fileError }
            throw .system(operation: .write, path: directory.pathOf(name), errno: EIO, message: error.description)
        }
        prune(in: directory, now: time)
    }

    /// The kept versions, oldest first.
    public func list() -> [Version] {
        guard let directory = try? DirectoryHandle(opening: folder, on: state.fileSystem) else { return [] }
        return list(in: directory)
    }

    /// What reading a kept version found.
    public enum Reading: Sendable {
        /// Its bytes, the ones it was kept with.
        case bytes(Data)
        /// It is no longer there.
        case gone
        /// It could not be read now (an I/O error), or its file holds other bytes: not known to be
        /// lost, so never a reason to retire it.
        case unreadable
    }

    /// Reads `version`.
    public func read(_ version: Version) -> Reading {
        do {
            let bytes = try FileReading.readAll(atPath: version.path, on: state.fileSystem, followSymlinks: false)
            return SHA256.hexHash(bytes) == version.sha256 ? .bytes(bytes) : .unreadable
        } catch .notFound {
            return .gone
        } catch {
            return .unreadable
        }
    }

    /// Forgets the version whose bytes hash to `sha256` (a version of the vault holds it now).
    public func retire(sha256: String) {
        guard let directory = try? DirectoryHandle(opening: folder, on: state.fileSystem) else { return }
        for version in list(in: directory) where version.sha256 == sha256 {
            _ = SystemCalls.unlink(PathText.name(of: version.path), in: directory)
        }
    }

    /// `<unix seconds>-<sha256>.kdbx`.
    private static func fileName(sha256: String, kept: Date) -> String {
        "\(Int(kept.timeIntervalSince1970))-\(sha256).kdbx"
    }

    private func list(in directory: DirectoryHandle) -> [Version] {
        var versions: [Version] = []
        for name in directory.names() where name.hasSuffix(".kdbx") && !name.hasPrefix(DurableFile.temporaryPrefix) {
            guard let status = directory.status(of: name), status.isRegularFile,
                  let dash = name.firstIndex(of: "-"), let seconds = Int(name[..<dash]) else { continue }
            let sha256 = String(name[name.index(after: dash)...].dropLast(5))
            guard sha256.count == 64 else { continue }
            versions.append(Version(sha256: sha256, path: directory.pathOf(name), kept: Date(timeIntervalSince1970: Double(seconds))))
        }
        return versions.sorted { ($0.kept, $0.sha256) < ($1.kept, $1.sha256) }
    }

    /// Removes versions older than `maximumAge` and all but the newest `maximumCount`.
    private func prune(in directory: DirectoryHandle, now: Date) {
        let versions = list(in: directory)
        for (index, version) in versions.enumerated()
        where versions.count - index > Self.maximumCount || now.timeIntervalSince(version.kept) > Self.maximumAge {
            _ = SystemCalls.unlink(PathText.name(of: version.path), in: directory)
        }
    }
}

public import Foundation
internal import Synchronization
#if canImport(Glibc)
internal import Glibc
#endif

/// Why a durable save did not replace the file.
public enum SaveError: Error, Sendable, CustomStringConvertible {
    /// The file on disk is no longer the version the save was based on (nil: it disappeared).
    case changedOnDisk(current: Fingerprint?)
    /// A system call failed; nothing was replaced.
    case file(FileError)
    /// The bytes written did not read back as the vault they should be.
    case verificationFailed(String)

    /// The failure in one sentence.
    public var description: String {
        switch self {
        case .changedOnDisk(let current):
            current == nil ? "the file was removed by another program" : "the file was changed by another program"
        case .file(let error): error.description
        case .verificationFailed(let detail): "the written file did not verify: \(detail); nothing was replaced"
        }
    }
}

/// What a save does when the path names a symlink.
public enum SymlinkRule: Sendable {
    /// Writes the link's target: only for the vault the user named (a vault kept elsewhere and linked
    /// into the folder, say).
    case writeTarget
    /// Replaces the link itself with the file; its target is never touched. For everything else the
    /// tool writes (backups, outputs, state): a link planted in a shared folder must not redirect a
    /// write to another file of the user's.
    case replaceLink
}

/// What a save may replace.
public enum ReplacePolicy: Sendable {
    /// Only the version with this fingerprint (nil: only if no file exists yet) — compare-and-swap.
    case onlyIf(Fingerprint?)
    /// Whatever is there (an explicit overwrite, or a new output file).
    case anything
}

/// Reading and durably replacing files: the temp file is created 0600 and exclusively in the
/// target's own directory, written in full, fsynced, read back and verified, compared with the
/// expected version of the target, swapped in, and the directory is fsynced — every step relative to
/// the directory's descriptor, opened once (`DirectoryHandle`). The new file is 0600; a symlink at the
/// target is replaced unless the rule is `.writeTarget` (the vault the user named). Every system call
/// goes through `SystemCalls`. A failed fsync is never retried on the same file: the temp file is
/// rebuilt once.
public enum DurableFile {
    /// Prefix of this tool's temp files (recognised and ignored by the watcher, cleaned up later).
    public static let temporaryPrefix = ".mypass-sync-tmp-"

    /// The bytes at `path` on `fileSystem` and their fingerprint (both from one descriptor).
    public static func read(
        atPath path: String, on fileSystem: FileSystem, followSymlinks: Bool = true, limit: Int64 = FileReading.maximumSize
    ) throws(FileError) -> (bytes: Data, fingerprint: Fingerprint) {
        let (bytes, status) = try FileReading.readWithStatus(atPath: path, on: fileSystem, followSymlinks: followSymlinks, limit: limit)
        return (bytes, Fingerprint(status: status, bytes: bytes))
    }

    /// The bytes of the regular file `name` in `directory` (never through a symlink) and their fingerprint.
    public static func read(
        _ name: String, in directory: DirectoryHandle, limit: Int64 = FileReading.maximumSize
    ) throws(FileError) -> (bytes: Data, fingerprint: Fingerprint) {
        let (bytes, status) = try directory.read(name, limit: limit)
        return (bytes, Fingerprint(status: status, bytes: bytes))
    }

    /// The fingerprint of the file at `path` on `fileSystem` now, nil when there is none.
    public static func fingerprint(atPath path: String, on fileSystem: FileSystem) throws(FileError) -> Fingerprint? {
        do {
            return try read(atPath: path, on: fileSystem).fingerprint
        } catch .notFound {
            return nil
        }
    }

    /// The fingerprint of the regular file `name` in `directory` now, nil when there is none.
    static func fingerprint(of name: String, in directory: DirectoryHandle) throws(FileError) -> Fingerprint? {
        do {
            return try directory.fingerprint(of: name)
        } catch .notFound {
            return nil
        }
    }

    /// Replaces the file at `path` by `data` as `policy` allows. The temp file is read back and must
    /// hold exactly `data`; `verify` then receives those bytes and throws if they are not the intended
    /// vault. Returns the new fingerprint.
    /// `durable: false` skips the fsyncs (still atomic): for derived data such as the sync state, whose
    /// loss after a power cut only costs the next merge its most recent base.
    /// `mayReplace` is asked just before the compare-and-swap: false refuses like a changed file
    /// (a sync engine began a transfer into the folder meanwhile, say).
    /// The file is written 0600 whatever mode the replaced one had (a sync engine carries permission
    /// bits from other devices: a planted 0666 must not make the vault world-readable); its owner is
    /// kept for the vault (`symlinks: .writeTarget`). The directory is opened once and every step of
    /// the save happens relative to it (`DirectoryHandle`).
    public static func replace(
        atPath path: String, on fileSystem: FileSystem, with data: Data, policy: ReplacePolicy, durable: Bool = true,
        symlinks: SymlinkRule = .replaceLink, verify: (Data) throws -> Void = { _ in }, mayReplace: () -> Bool = { true }
    ) throws(SaveError) -> Fingerprint {
        let target = symlinks == .writeTarget ? resolvedPath(path, on: fileSystem) : path
        let directory: DirectoryHandle, name: String
        do { (directory, name) = try DirectoryHandle.parent(of: target, on: fileSystem) } catch { throw .file(error) }
        return try replace(name, in: directory, with: data, policy: policy, durable: durable, keepOwner: symlinks == .writeTarget,
                           verify: verify, mayReplace: mayReplace)
    }

    /// `replace(atPath:…)` for the file `name` in an open `directory`; a symlink at `name` is
    /// replaced, never followed. `keepOwner`: the new file gets the replaced file's owner.
    /// Anything else at `name` (a device node, a FIFO, a socket, a directory) is refused and left as
    /// it is: a rename over `/dev/null` would turn it into a regular file.
    public static func replace(
        _ name: String, in directory: DirectoryHandle, with data: Data, policy: ReplacePolicy, durable: Bool = true,
        keepOwner: Bool = false, verify: (Data) throws -> Void = { _ in }, mayReplace: () -> Bool = { true }
    ) throws(SaveError) -> Fingerprint {
        // A shutdown signal waits for this replacement to finish (the file system's `ShutdownGate`).
        try directory.fileSystem.shutdownGate.whileWriting { () throws(SaveError) -> Fingerprint in
            try replaceNow(name, in: directory, with: data, policy: policy, durable: durable, keepOwner: keepOwner, verify: verify,
                           mayReplace: mayReplace)
        }
    }

    private static func replaceNow(
        _ name: String, in directory: DirectoryHandle, with data: Data, policy: ReplacePolicy, durable: Bool,
        keepOwner: Bool, verify: (Data) throws -> Void, mayReplace: () -> Bool
    ) throws(SaveError) -> Fingerprint {
        let found = directory.status(of: name)
        if let found, !found.isRegularFile, !found.isSymbolicLink { throw .file(.notARegularFile(path: directory.pathOf(name))) }
        let existing = found.flatMap { $0.isRegularFile ? $0 : nil }
        let owner = keepOwner ? existing.map { ($0.owner.user, $0.owner.group) } : nil
        var attempt = 0
        while true {
            attempt += 1
            let temporary = temporaryPrefix + name + "-" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
            do throws(SaveError) {
                try writeTemporary(data, to: temporary, in: directory, owner: owner, durable: durable)
            } catch {
                _ = SystemCalls.unlink(temporary, in: directory)
                // fsync failed: never retried on the same file; one fresh temp file, then give up.
                if case .file(.system(operation: .fsync, _, _, _)) = error, attempt == 1 { continue }
                throw error
            }
            do throws(SaveError) {
                try finish(temporary: temporary, target: name, in: directory, data: data, policy: policy, durable: durable,
                           verify: verify, mayReplace: mayReplace)
            } catch {
                _ = SystemCalls.unlink(temporary, in: directory)
                throw error
            }
            guard let status = directory.status(of: name) else { throw .file(FileReading.error(errno, .stat, directory.pathOf(name))) }
            return Fingerprint(status: status, bytes: data)
        }
    }

    private static func writeTemporary(
        _ data: Data, to temporary: String, in directory: DirectoryHandle, owner: (uid_t, gid_t)?, durable: Bool
    ) throws(SaveError) {
        let shown = directory.pathOf(temporary)
        guard let file = SystemCalls.open(temporary, in: directory, O_WRONLY | O_CREAT | O_EXCL, 0o600) else {
            throw .file(FileReading.error(errno, .createTemporary, shown))
        }
        if let failure = data.withUnsafeBytes({ SystemCalls.writeAll(file, $0) }) {
            throw .file(FileReading.error(failure, .write, shown))
        }
        if let owner, owner.0 != getuid() || owner.1 != getgid() { _ = SystemCalls.changeOwner(file, to: owner) }
        guard !durable || SystemCalls.fsync(file) == 0 else {
            let failure = errno
            throw .file(.system(operation: .fsync, path: shown, errno: failure, message: String(cString: strerror(failure))))
        }
        guard file.close() == 0 else { throw .file(FileReading.error(errno, .close, shown)) }
    }

    private static func finish(
        temporary: String, target: String, in directory: DirectoryHandle, data: Data, policy: ReplacePolicy, durable: Bool,
        verify: (Data) throws -> Void, mayReplace: () -> Bool
    ) throws(SaveError) {
        // Read back what reached the disk (in pieces, compared with the bytes written) and let the
        // caller check that those bytes are the intended vault.
        let intact: Bool
        do { intact = try directory.holds(temporary, exactly: data) } catch { throw .file(error) }
        guard intact else { throw .verificationFailed("the bytes on disk differ from the bytes written") }
        do { try verify(data) } catch { throw .verificationFailed(String(describing: error)) }
        guard mayReplace() else {
            let current: Fingerprint?
            do { current = try fingerprint(of: target, in: directory) } catch { throw .file(error) }
            throw .changedOnDisk(current: current)
        }
        // Compare-and-swap: only the version this save was based on may be replaced.
        switch policy {
        case .anything:
            guard SystemCalls.rename(temporary, to: target, in: directory) == 0 else {
                throw .file(FileReading.error(errno, .rename, directory.pathOf(target)))
            }
        case .onlyIf(nil):
            // Only if there is still no file: refused by the kernel otherwise, no window.
            guard SystemCalls.renameNoReplace(temporary, to: target, in: directory) == 0 else {
                if errno == EEXIST { throw .changedOnDisk(current: try? fingerprint(of: target, in: directory)) }
                throw .file(FileReading.error(errno, .rename, directory.pathOf(target)))
            }
        case .onlyIf(let expected?):
            let current: Fingerprint?
            do { current = try fingerprint(of: target, in: directory) } catch { throw .file(error) }
            guard let current, expected.sameContent(as: current) && expected.inode == current.inode else {
                throw .changedOnDisk(current: current)
            }
            try swapIn(temporary: temporary, target: target, in: directory, expected: expected)
        }
        guard !durable || SystemCalls.syncDirectory(directory) == 0 else {
            // The new file is in place; only its durability against a power cut is in doubt.
            throw .file(FileReading.error(errno, .fsyncDirectory, directory.path))
        }
    }

    /// Swaps the temp file in with renameat2(RENAME_EXCHANGE) and checks what came out: the version
    /// the save was based on is removed; any other version (a writer that landed between the check
    /// and the swap) is swapped back in, and the save reports the change, so it is merged, never
    /// overwritten.
    private static func swapIn(temporary: String, target: String, in directory: DirectoryHandle, expected: Fingerprint) throws(SaveError) {
        guard let ours = directory.status(of: temporary) else { throw .file(FileReading.error(errno, .stat, directory.pathOf(temporary))) }
        // A fake file system may land "another writer" here, between the compare and the swap.
        directory.fileSystem.beforeSwap(of: directory.pathOf(target))
        guard SystemCalls.exchange(temporary, with: target, in: directory) == 0 else {
            if errno == ENOENT { throw .changedOnDisk(current: nil) }  // the vault was removed meanwhile
            throw .file(FileReading.error(errno, .rename, directory.pathOf(target)))
        }
        // `temporary` now names the file that was at the target.
        if let displaced = try? directory.fingerprint(of: temporary),
           expected.sameContent(as: displaced) && expected.inode == displaced.inode {
            _ = SystemCalls.unlink(temporary, in: directory)
            return
        }
        if SystemCalls.exchange(temporary, with: target, in: directory) == 0,
           let back = directory.status(of: temporary), back.inode == ours.inode {
            _ = SystemCalls.unlink(temporary, in: directory)
            throw .changedOnDisk(current: try? fingerprint(of: target, in: directory))
        }
        // Could not swap back, or yet another writer came in between: whatever is at the temp name is
        // someone's version and stays beside the vault as a conflict copy, which the watcher and
        // `conflicts --merge` fold in (a temp file would be cleaned up as stale).
        let keep = ((target as NSString).deletingPathExtension) + ".sync-conflict-"
            + String(Int(Date().timeIntervalSince1970)) + "-MYPASSX.kdbx"
        _ = SystemCalls.rename(temporary, to: keep, in: directory)
        throw .changedOnDisk(current: try? fingerprint(of: target, in: directory))
    }

    /// Removes this tool's temp files for `path` left by writers that died (older than `age` seconds;
    /// younger ones may belong to a save in progress on another machine). Returns their names.
    @discardableResult
    public static func removeStaleTemporaries(of path: String, on fileSystem: FileSystem, olderThan age: TimeInterval = 600) -> [String] {
        guard let (directory, name) = try? DirectoryHandle.parent(of: resolvedPath(path, on: fileSystem), on: fileSystem) else { return [] }
        let prefix = temporaryPrefix + name + "-"
        var removed: [String] = []
        let now = Date().timeIntervalSince1970
        for candidate in directory.names() where candidate.hasPrefix(prefix) {
            guard let status = directory.status(of: candidate), now - Double(status.modified.seconds) > age else { continue }
            if SystemCalls.unlink(candidate, in: directory) == 0 { removed.append(candidate) }
        }
        return removed
    }

    /// `path` with symlinks resolved when it exists (so the link's target is what gets replaced).
    public static func resolvedPath(_ path: String, on fileSystem: FileSystem) -> String {
        SystemCalls.resolve(path, on: fileSystem) ?? path
    }

    /// The one name of the file at `path`, whether it is there or not: symlinks resolved, and when
    /// the file is missing (a vault a sync engine renamed aside) its folder resolved, so that state
    /// kept under this name is found in both cases. A dangling symlink stays itself.
    public static func canonicalPath(_ path: String, on fileSystem: FileSystem) -> String {
        if let resolved = SystemCalls.resolve(path, on: fileSystem) { return resolved }
        guard SystemCalls.status(atPath: path, on: fileSystem) == nil else { return path }
        let folder = PathText.folder(of: path)
        guard let resolvedFolder = SystemCalls.resolve(folder.isEmpty ? "." : folder, on: fileSystem) else { return path }
        return PathText.joining(resolvedFolder, PathText.name(of: path))
    }
}

internal import CGNUCalls
public import Foundation
#if canImport(Glibc)
internal import Glibc
#endif

/// The one gate every system call of the sync layer goes through, on the `FileSystem` the call is
/// made on (the directory's or descriptor's, or the one passed in), so that a test can make the N-th
/// call of an operation fail (ENOSPC, EIO, EINTR) or write short on the file system it gives a job —
/// or, through the documented test variable `MYPASS_SYNC_FAULTS`, in a `mypass-sync` child process.
public enum SystemCalls {
    /// The operations the gate knows.
    public enum Operation: String, Sendable, CaseIterable {
        case open, write, fsync, close, rename, unlink, directorySync, watch
        /// Opening a file to read it, by path or in a directory.
        case read
        /// Taking this device's write lock (open and `flock` of the lock file).
        case lock
        /// `fstatat` of a name in a directory.
        case stat
        /// Giving a new file the owner of the one it replaces.
        case chown
        /// Resolving a path to the file it names (`realpath`).
        case resolve
        /// Creating a directory (0700).
        case makeDirectory
        /// Listing a directory's names.
        case list
    }

    /// A planned failure: the `occurrence`-th call (1-based) of `operation` — counting only calls on
    /// paths containing `pathContains`, when given — fails with `errorNumber`, or, with `shortWrite`,
    /// writes only half of what it was given.
    struct Fault: Sendable, Equatable {
        /// The operation that fails.
        var operation: Operation
        /// Which call of it fails (1-based).
        var occurrence: Int
        /// The errno it fails with.
        var errorNumber: Int32
        /// Instead of failing, a write writes only half.
        var shortWrite: Bool
        /// Only calls on paths containing this text count.
        var pathContains: String?

        /// A fault of `operation` at its `occurrence`-th call.
        init(_ operation: Operation, occurrence: Int, errorNumber: Int32 = EIO, shortWrite: Bool = false, pathContains: String? = nil) {
            self.operation = operation
            self.occurrence = occurrence
            self.errorNumber = errorNumber
            self.shortWrite = shortWrite
            self.pathContains = pathContains
        }

        #if MYPASS_TEST_HOOKS
        /// Parses `write:3:ENOSPC`, `fsync:1:EIO`, `write:2:short`, `rename:1:EINTR`, optionally followed by
        /// `:TEXT` to count only calls on paths containing TEXT (`write:1:ENOSPC:vault.kdbx`).
        init?(parsing text: String) {
            let parts = text.split(separator: ":", maxSplits: 3).map(String.init)
            guard parts.count >= 3, let operation = Operation(rawValue: parts[0]), let occurrence = Int(parts[1]) else { return nil }
            let filter = parts.count == 4 ? parts[3] : nil
            let errors: [String: Int32] = ["ENOSPC": ENOSPC, "EIO": EIO, "EINTR": EINTR, "EACCES": EACCES]
            if parts[2] == "short" {
                self.init(operation, occurrence: occurrence, errorNumber: 0, shortWrite: true, pathContains: filter)
            } else if let number = errors[parts[2]] {
                self.init(operation, occurrence: occurrence, errorNumber: number, pathContains: filter)
            } else {
                return nil
            }
        }
        #endif
    }

    /// Adds an inotify watch through libinotifytools; returns errno on failure (ENOSPC: the user's
    /// watch limit, fs.inotify.max_user_watches, is reached).
    package static func addWatch(
        _ directory: String, events: Int32, on fileSystem: FileSystem, using add: (String, Int32) -> Int32, lastError: () -> Int32
    ) -> Int32? {
        if let fault = fileSystem.fault(for: .watch, path: directory) { return fault.errorNumber }
        return add(directory, events) == 0 ? lastError() : nil
    }

    /// Opens `name` in `directory` (never through a symlink); read-only opens count as `read`.
    static func open(_ name: String, in directory: DirectoryHandle, _ flags: Int32, _ mode: mode_t = 0) -> FileDescriptor? {
        let path = directory.pathOf(name)
        if let fault = directory.fileSystem.fault(for: flags & O_ACCMODE == O_RDONLY ? .read : .open, path: path) {
            errno = fault.errorNumber
            return nil
        }
        return FileDescriptor(directory.openFile(name, flags, mode), path: path, on: directory.fileSystem)
    }

    /// Opens the directory at `path` (symlinks followed: the user named it); counts as `read`.
    static func openDirectory(_ path: String, on fileSystem: FileSystem) -> FileDescriptor? {
        if let fault = fileSystem.fault(for: .read, path: path) { errno = fault.errorNumber; return nil }
        return FileDescriptor(Glibc.open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC), path: path, on: fileSystem)
    }

    /// Creates the directory `name` (0700) in `directory`; 0, or -1 with `errno`.
    static func makeDirectory(_ name: String, in directory: DirectoryHandle) -> Int32 {
        if let fault = directory.fileSystem.fault(for: .makeDirectory, path: directory.pathOf(name)) { errno = fault.errorNumber; return -1 }
        guard DirectoryHandle.isSingleName(name) else { errno = EINVAL; return -1 }
        return mkdirat(directory.descriptor, name, 0o700)
    }

    /// The names in `directory` (without `.` and `..`), sorted; nil with `errno` when it cannot be listed.
    static func names(in directory: DirectoryHandle) -> [String]? {
        if let fault = directory.fileSystem.fault(for: .list, path: directory.path) { errno = fault.errorNumber; return nil }
        let copy = dup(directory.descriptor)
        guard copy >= 0 else { return nil }
        guard let stream = fdopendir(copy) else {
            _ = Glibc.close(copy)
            return nil
        }
        defer { closedir(stream) }  // closes `copy`
        rewinddir(stream)
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    /// What `lstat` says of the file at `path` (a symlink is described, not followed); nil with `errno`.
    package static func status(atPath path: String, on fileSystem: FileSystem) -> FileStatus? {
        if let fault = fileSystem.fault(for: .stat, path: path) { errno = fault.errorNumber; return nil }
        var status = stat()
        guard lstat(path, &status) == 0 else { return nil }
        return FileStatus(status)
    }

    /// Which file is at `path` (a symlink itself) and when it last changed status (ctime), from one
    /// `statx` call; nil with `errno`.
    package static func identity(atPath path: String, on fileSystem: FileSystem) -> (identity: FileIdentity, changed: FileTime)? {
        if let fault = fileSystem.fault(for: .stat, path: path) { errno = fault.errorNumber; return nil }
        var times = mypass_file_times()
        guard mypass_file_times(AT_FDCWD, path, &times) == 0 else { return nil }
        let identity = FileIdentity(
            device: UInt64(times.device), inode: UInt64(times.inode),
            born: times.has_birth != 0 ? FileTime(seconds: Int64(times.born_seconds), nanoseconds: Int64(times.born_nanoseconds)) : nil,
            size: Int64(times.size), modified: FileTime(seconds: Int64(times.modified_seconds), nanoseconds: Int64(times.modified_nanoseconds)))
        return (identity, FileTime(seconds: Int64(times.changed_seconds), nanoseconds: Int64(times.changed_nanoseconds)))
    }

    /// Opens the file at `path` to read it (symlinks followed: the user named it).
    package static func openForReading(_ path: String, on fileSystem: FileSystem) -> FileDescriptor? {
        if let fault = fileSystem.fault(for: .read, path: path) { errno = fault.errorNumber; return nil }
        return FileDescriptor(Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), path: path, on: fileSystem)
    }

    /// Opens (creating, 0600) the lock file at `path` and takes an exclusive `flock` on it, waiting
    /// for other holders; nil with `errno` on failure.
    package static func lockFile(_ path: String, on fileSystem: FileSystem) -> FileDescriptor? {
        if let fault = fileSystem.fault(for: .lock, path: path) { errno = fault.errorNumber; return nil }
        guard let descriptor = FileDescriptor(Glibc.open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600), path: path, on: fileSystem)
        else { return nil }
        while flock(descriptor.raw, LOCK_EX) != 0 {
            guard errno == EINTR else {
                let failure = errno
                _ = descriptor.close()
                errno = failure
                return nil
            }
        }
        return descriptor
    }

    /// The `lstat` of `name` in `directory` (a symlink is described, not followed); nil with `errno`.
    static func status(of name: String, in directory: DirectoryHandle) -> FileStatus? {
        if let fault = directory.fileSystem.fault(for: .stat, path: directory.pathOf(name)) { errno = fault.errorNumber; return nil }
        guard DirectoryHandle.isSingleName(name) else { errno = EINVAL; return nil }
        var status = stat()
        return fstatat(directory.descriptor, name, &status, AT_SYMLINK_NOFOLLOW) == 0 ? FileStatus(status) : nil
    }

    /// Gives the open file `descriptor` the owner `owner`; 0, or -1 with `errno`.
    static func changeOwner(_ descriptor: borrowing FileDescriptor, to owner: (uid_t, gid_t)) -> Int32 {
        if let fault = descriptor.fileSystem.fault(for: .chown, path: descriptor.path) { errno = fault.errorNumber; return -1 }
        return fchown(descriptor.raw, owner.0, owner.1)
    }

    /// The absolute path `path` names with every symlink resolved; nil with `errno`.
    static func resolve(_ path: String, on fileSystem: FileSystem) -> String? {
        if let fault = fileSystem.fault(for: .resolve, path: path) { errno = fault.errorNumber; return nil }
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Writes all of `buffer`, retrying short writes and EINTR; returns errno on failure.
    static func writeAll(_ file: borrowing FileDescriptor, _ buffer: UnsafeRawBufferPointer) -> Int32? {
        let descriptor = file.raw
        var offset = 0
        while offset < buffer.count {
            var length = buffer.count - offset
            if let fault = file.fileSystem.fault(for: .write, path: file.path) {
                if fault.shortWrite {
                    length = max(1, length / 2)
                } else if fault.errorNumber == EINTR {
                    continue  // Interrupted before anything was written: try again.
                } else {
                    return fault.errorNumber
                }
            }
            let written = Glibc.write(descriptor, buffer.baseAddress! + offset, length)
            if written < 0 {
                if errno == EINTR { continue }
                return errno
            }
            offset += written
        }
        return nil
    }

    static func fsync(_ file: borrowing FileDescriptor) -> Int32 {
        if let fault = file.fileSystem.fault(for: .fsync, path: file.path) { errno = fault.errorNumber; return -1 }
        return Glibc.fsync(file.raw)
    }

    /// Closes `descriptor`, opened as `path` on `fileSystem` (only `FileDescriptor` calls this).
    static func close(_ descriptor: Int32, path: String?, on fileSystem: FileSystem) -> Int32 {
        if let fault = fileSystem.fault(for: .close, path: path) {
            _ = Glibc.close(descriptor)
            errno = fault.errorNumber
            return -1
        }
        return Glibc.close(descriptor)
    }

    /// Renames `from` to `to`, both in `directory`, replacing whatever `to` names.
    static func rename(_ from: String, to: String, in directory: DirectoryHandle) -> Int32 {
        if let fault = directory.fileSystem.fault(for: .rename, path: directory.pathOf(to)) { errno = fault.errorNumber; return -1 }
        guard DirectoryHandle.isSingleName(from), DirectoryHandle.isSingleName(to) else { errno = EINVAL; return -1 }
        return Glibc.renameat(directory.descriptor, from, directory.descriptor, to)
    }

    /// Swaps `from` and `to` in `directory` atomically (renameat2 RENAME_EXCHANGE); a `rename` fault applies.
    static func exchange(_ from: String, with to: String, in directory: DirectoryHandle) -> Int32 {
        if let fault = directory.fileSystem.fault(for: .rename, path: directory.pathOf(to)) { errno = fault.errorNumber; return -1 }
        guard DirectoryHandle.isSingleName(from), DirectoryHandle.isSingleName(to) else { errno = EINVAL; return -1 }
        return mypass_rename_exchange(directory.descriptor, from, to)
    }

    /// Renames `from` to `to` in `directory` only if `to` does not exist (renameat2 RENAME_NOREPLACE).
    static func renameNoReplace(_ from: String, to: String, in directory: DirectoryHandle) -> Int32 {
        if let fault = directory.fileSystem.fault(for: .rename, path: directory.pathOf(to)) { errno = fault.errorNumber; return -1 }
        guard DirectoryHandle.isSingleName(from), DirectoryHandle.isSingleName(to) else { errno = EINVAL; return -1 }
        return mypass_rename_no_replace(directory.descriptor, from, to)
    }

    /// Removes the file `name` from `directory` (a symlink there is removed, never its target).
    package static func unlink(_ name: String, in directory: DirectoryHandle) -> Int32 {
        if let fault = directory.fileSystem.fault(for: .unlink, path: directory.pathOf(name)) { errno = fault.errorNumber; return -1 }
        guard DirectoryHandle.isSingleName(name) else { errno = EINVAL; return -1 }
        return Glibc.unlinkat(directory.descriptor, name, 0)
    }

    /// fsync of a directory, so that a rename in it survives a power cut.
    static func syncDirectory(_ directory: DirectoryHandle) -> Int32 {
        if let fault = directory.fileSystem.fault(for: .directorySync, path: directory.path) { errno = fault.errorNumber; return -1 }
        return Glibc.fsync(directory.descriptor)
    }
}

/// What `lstat` says of a file, in typed values.
public struct FileStatus: Sendable, Equatable {
    /// The device the file is on.
    public let device: UInt64
    /// The file's inode.
    public let inode: UInt64
    /// Its size in bytes.
    public let size: Int64
    /// Its modification time.
    public let modified: FileTime
    /// Whether it is a regular file (not a symlink, directory, FIFO or device).
    public let isRegularFile: Bool
    /// Whether it is a symlink (`lstat`: the link itself).
    public let isSymbolicLink: Bool
    /// Its owner and group.
    let owner: (user: uid_t, group: gid_t)

    init(_ status: stat) {
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
        size = Int64(status.st_size)
        modified = FileTime(seconds: Int64(status.st_mtim.tv_sec), nanoseconds: Int64(status.st_mtim.tv_nsec))
        isRegularFile = (status.st_mode & S_IFMT) == S_IFREG
        isSymbolicLink = (status.st_mode & S_IFMT) == S_IFLNK
        owner = (status.st_uid, status.st_gid)
    }

    /// The modification time in seconds since 1970.
    public var modifiedSeconds: Double { Double(modified.seconds) + Double(modified.nanoseconds) / 1e9 }

    public static func == (a: FileStatus, b: FileStatus) -> Bool {
        a.device == b.device && a.inode == b.inode && a.size == b.size && a.modified == b.modified && a.isRegularFile == b.isRegularFile
            && a.owner == b.owner
    }
}


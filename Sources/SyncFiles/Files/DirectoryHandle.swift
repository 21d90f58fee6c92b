public import Foundation
#if canImport(Glibc)
internal import Glibc
#endif

/// A directory opened once, and every file in it reached by name relative to that descriptor
/// (`openat`, `fstatat`, `renameat2`, `unlinkat`, `mkdirat`) and never through a symlink: the one
/// rule for paths inside a synced folder. Whoever else writes into the folder controls its names;
/// once this directory is open, swapping it (or one of its parents) for a symlink elsewhere does not
/// move the rest of the operation there — every later call still lands in the directory that was
/// opened. A name is one path component; the file it names is checked with `fstat` on what was
/// opened, so a symlink, FIFO or device under that name is refused, not followed or blocked on.
public final class DirectoryHandle: Sendable {
    /// The path the directory was opened by (for messages; never used to reach a file again).
    public let path: String
    /// The open directory (O_RDONLY | O_DIRECTORY), closed with this handle.
    private let file: FileDescriptor
    var descriptor: Int32 { file.raw }
    /// The file system every call in this directory goes to.
    public var fileSystem: FileSystem { file.fileSystem }

    /// Opens the directory at `path` on `fileSystem` (the user named it, so symlinks in `path` itself
    /// are followed).
    public init(opening path: String, on fileSystem: FileSystem) throws(FileError) {
        let shown = path.isEmpty ? "." : path
        guard let file = SystemCalls.openDirectory(shown, on: fileSystem) else { throw FileReading.error(errno, .openDirectory, shown) }
        self.path = shown
        self.file = file
    }

    private init(file: consuming FileDescriptor, path: String) {
        self.file = file
        self.path = path
    }

    /// The directory holding `filePath`, opened on `fileSystem`, and the file's name in it.
    public static func parent(of filePath: String, on fileSystem: FileSystem) throws(FileError) -> (directory: DirectoryHandle, name: String) {
        let name = PathText.name(of: filePath)
        let parent = PathText.folder(of: filePath)
        guard isSingleName(name) else { throw .notARegularFile(path: filePath) }
        return (try DirectoryHandle(opening: parent.isEmpty ? (filePath.hasPrefix("/") ? "/" : ".") : parent, on: fileSystem), name)
    }

    /// The path of `name` in this directory, for messages and fault matching.
    public func pathOf(_ name: String) -> String { path == "/" ? "/" + name : path + "/" + name }

    /// Whether `name` is one path component (no slash, not `.` or `..`, not empty).
    static func isSingleName(_ name: String) -> Bool {
        !name.isEmpty && name != "." && name != ".." && !name.contains("/") && !name.utf8.contains(0)
    }

    /// Opens `name` in this directory without following a symlink there (ELOOP for one).
    func openFile(_ name: String, _ flags: Int32, _ mode: mode_t = 0) -> Int32 {
        guard Self.isSingleName(name) else { errno = EINVAL; return -1 }
        return Glibc.openat(descriptor, name, flags | O_NOFOLLOW | O_CLOEXEC, mode)
    }

    /// The bytes of the regular file `name` (at most `limit`) and the `stat` of what was read, both
    /// from one descriptor: a symlink, FIFO or device under that name is `notARegularFile`, at once.
    public func read(_ name: String, limit: Int64 = FileReading.maximumSize) throws(FileError) -> (bytes: Data, status: stat) {
        guard let file = SystemCalls.open(name, in: self, O_RDONLY | O_NONBLOCK) else {
            if errno == ELOOP { throw .notARegularFile(path: pathOf(name)) }
            throw FileReading.error(errno, .open, pathOf(name))
        }
        return try FileReading.readAll(file, shownAs: pathOf(name), limit: limit)
    }

    /// The fingerprint of the regular file `name` (never through a symlink), its bytes hashed as they
    /// are read: the same as `DurableFile.read`'s, without holding the file in memory.
    public func fingerprint(of name: String, limit: Int64 = FileReading.maximumSize) throws(FileError) -> Fingerprint {
        guard let file = SystemCalls.open(name, in: self, O_RDONLY | O_NONBLOCK) else {
            if errno == ELOOP { throw .notARegularFile(path: pathOf(name)) }
            throw FileReading.error(errno, .open, pathOf(name))
        }
        let (status, sha256) = try FileReading.statusAndSHA256(file, shownAs: pathOf(name), limit: limit)
        return Fingerprint(status: status, sha256: sha256)
    }

    /// Whether the regular file `name` holds exactly `expected`, read back in pieces (never through a
    /// symlink): a save checks what reached the disk without a second copy of the file in memory.
    public func holds(_ name: String, exactly expected: Data) throws(FileError) -> Bool {
        guard let file = SystemCalls.open(name, in: self, O_RDONLY | O_NONBLOCK) else {
            if errno == ELOOP { throw .notARegularFile(path: pathOf(name)) }
            throw FileReading.error(errno, .open, pathOf(name))
        }
        return try FileReading.holds(file, exactly: expected, shownAs: pathOf(name))
    }

    /// The SHA-256 (lowercase hex) of the regular file `name`, read in pieces (never through a symlink).
    public func sha256(of name: String) throws(FileError) -> String {
        guard let file = SystemCalls.open(name, in: self, O_RDONLY | O_NONBLOCK) else {
            if errno == ELOOP { throw .notARegularFile(path: pathOf(name)) }
            throw FileReading.error(errno, .open, pathOf(name))
        }
        return try FileReading.sha256(file, shownAs: pathOf(name))
    }

    /// The `lstat` of `name` (a symlink is described, not followed); nil when there is none.
    public func status(of name: String) -> FileStatus? {
        SystemCalls.status(of: name, in: self)
    }

    /// The names in the directory (without `.` and `..`), sorted; empty when it cannot be listed.
    public func names() -> [String] {
        SystemCalls.names(in: self) ?? []
    }

    /// The real directory `name` in this one, created 0700 from the start when missing; a symlink or
    /// any other file under that name is refused, and so is a directory of another user's or one
    /// that others may write in (they could replace what is kept there).
    public func privateSubdirectory(_ name: String) throws(FileError) -> DirectoryHandle {
        guard Self.isSingleName(name) else { throw .notARegularFile(path: pathOf(name)) }
        if SystemCalls.makeDirectory(name, in: self) != 0 && errno != EEXIST {
            throw .system(operation: .makeDirectory, path: pathOf(name), errno: errno, message: String(cString: strerror(errno)))
        }
        guard let opened = SystemCalls.open(name, in: self, O_RDONLY | O_DIRECTORY) else {
            let code = errno
            if code == ELOOP || code == ENOTDIR {
                throw .system(operation: .makeDirectory, path: pathOf(name), errno: ENOTDIR, message: "exists and is not a directory")
            }
            throw FileReading.error(code, .openDirectory, pathOf(name))
        }
        var info = stat()
        guard fstat(opened.raw, &info) == 0 else { throw FileReading.error(errno, .stat, pathOf(name)) }
        guard info.st_uid == geteuid() else {
            throw .system(operation: .openDirectory, path: pathOf(name), errno: EPERM,
                          message: "belongs to another user (uid \(info.st_uid)); refused as a private folder")
        }
        guard info.st_mode & 0o022 == 0 else {
            throw .system(operation: .openDirectory, path: pathOf(name), errno: EPERM,
                          message: "others may write in it (mode \(String(info.st_mode & 0o777, radix: 8))); refused as a private folder: "
                              + "chmod 700 it")
        }
        return DirectoryHandle(file: opened, path: pathOf(name))
    }

    /// The directory at `path` on `fileSystem`, each missing component created 0700 and the last one
    /// required to be a real directory (not a symlink to one).
    public static func privateDirectory(_ path: String, on fileSystem: FileSystem) throws(FileError) -> DirectoryHandle {
        let parent = PathText.folder(of: path)
        let name = PathText.name(of: path)
        guard isSingleName(name) else { return try DirectoryHandle(opening: path, on: fileSystem) }
        let above: DirectoryHandle
        if parent.isEmpty {
            above = try DirectoryHandle(opening: path.hasPrefix("/") ? "/" : ".", on: fileSystem)
        } else {
            do { above = try DirectoryHandle(opening: parent, on: fileSystem) } catch .notFound { above = try privateDirectory(parent, on: fileSystem) }
        }
        return try above.privateSubdirectory(name)
    }
}

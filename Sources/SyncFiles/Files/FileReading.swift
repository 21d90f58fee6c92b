public import Foundation
internal import MyPassCrypto
#if canImport(Glibc)
internal import Glibc
#endif

/// Reads whole files with plain system calls and typed errors (no Foundation file APIs, whose
/// errors are vague and which follow different rules for symlinks).
public enum FileReading {
    /// Largest file read into memory (4 GiB): a vault is never near this; anything bigger is refused.
    public static let maximumSize: Int64 = 4 << 30

    /// The bytes of the regular file at `path` on `fileSystem` (symlinks followed unless `followSymlinks` is false: the
    /// file is then opened relative to its directory's descriptor and a symlink is `notARegularFile`),
    /// at most `limit` bytes. Opened non-blocking, so that a FIFO or device planted under a vault's name
    /// is refused at once instead of blocking the reader.
    public static func readAll(
        atPath path: String, on fileSystem: FileSystem, followSymlinks: Bool = true, limit: Int64 = maximumSize
    ) throws(FileError) -> Data {
        try readWithStatus(atPath: path, on: fileSystem, followSymlinks: followSymlinks, limit: limit).bytes
    }

    /// `readAll` and the `stat` of the very file read (one descriptor: no second lookup of the path).
    public static func readWithStatus(
        atPath path: String, on fileSystem: FileSystem, followSymlinks: Bool = true, limit: Int64 = maximumSize
    ) throws(FileError) -> (bytes: Data, status: stat) {
        guard followSymlinks else {
            let (directory, name) = try DirectoryHandle.parent(of: path, on: fileSystem)
            return try directory.read(name, limit: limit)
        }
        guard let file = SystemCalls.openForReading(path, on: fileSystem) else { throw error(errno, .open, path) }
        return try readAll(file, shownAs: path, limit: limit)
    }

    /// The bytes of the open file (which must be a regular file of at most `limit` bytes) and its
    /// `stat`; `shownAs` names it in errors.
    static func readAll(_ file: borrowing FileDescriptor, shownAs path: String, limit: Int64) throws(FileError) -> (bytes: Data, status: stat) {
        let descriptor = file.raw
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw error(errno, .stat, path) }
        guard (status.st_mode & S_IFMT) == S_IFREG else { throw .notARegularFile(path: path) }
        guard Int64(status.st_size) <= min(limit, maximumSize) else { throw .tooLarge(path: path, size: Int64(status.st_size)) }

        // A buffer of exactly the file's size: `Data(count:)` allocates a quarter more (room to
        // grow), and a vault's file is held for as long as the vault is open.
        let size = Int(status.st_size)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(size, 1), alignment: 16)
        var offset = 0
        var readError: Int32 = 0
        while offset < size {
            let count = read(descriptor, buffer.baseAddress! + offset, size - offset)
            if count < 0 {
                if errno == EINTR { continue }
                readError = errno
                break
            }
            if count == 0 { break }  // The file shrank while we read it.
            offset += count
        }
        if readError != 0 {
            buffer.deallocate()
            throw error(readError, .read, path)
        }
        guard offset > 0 else {
            buffer.deallocate()
            return (Data(), status)
        }
        let data = Data(bytesNoCopy: buffer.baseAddress!, count: offset, deallocator: .custom { pointer, _ in pointer.deallocate() })
        return (data, status)
    }

    /// Whether the open file (a regular file) holds exactly `expected`, compared 1 MiB at a time.
    static func holds(_ file: borrowing FileDescriptor, exactly expected: Data, shownAs path: String) throws(FileError) -> Bool {
        let descriptor = file.raw
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw error(errno, .stat, path) }
        guard (status.st_mode & S_IFMT) == S_IFREG else { throw .notARegularFile(path: path) }
        guard Int(status.st_size) == expected.count else { return false }
        var piece = [UInt8](repeating: 0, count: 1 << 20)
        var offset = expected.startIndex
        while true {
            let count = piece.withUnsafeMutableBytes { read(descriptor, $0.baseAddress!, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw error(errno, .read, path)
            }
            if count == 0 { return offset == expected.endIndex }
            guard expected.endIndex - offset >= count else { return false }  // the file grew meanwhile
            let same = piece.withUnsafeBytes { readBack in
                expected[offset..<(offset + count)].withUnsafeBytes { memcmp(readBack.baseAddress!, $0.baseAddress!, count) == 0 }
            }
            guard same else { return false }
            offset += count
        }
    }

    /// The SHA-256 (lowercase hex) of the regular file at `path` (symlinks followed unless
    /// `followSymlinks` is false, as for `readAll`), read in pieces: never held whole in memory.
    public static func sha256(atPath path: String, on fileSystem: FileSystem, followSymlinks: Bool = true) throws(FileError) -> String {
        guard followSymlinks else {
            let (directory, name) = try DirectoryHandle.parent(of: path, on: fileSystem)
            return try directory.sha256(of: name)
        }
        guard let file = SystemCalls.openForReading(path, on: fileSystem) else { throw error(errno, .open, path) }
        return try sha256(file, shownAs: path)
    }

    /// The SHA-256 (lowercase hex) of the open file, which must be a regular file, read 1 MiB at a time.
    static func sha256(_ file: borrowing FileDescriptor, shownAs path: String) throws(FileError) -> String {
        try statusAndSHA256(file, shownAs: path, limit: nil).sha256
    }

    /// The `stat` of the open file (a regular file of at most `limit` bytes, when given) and the
    /// SHA-256 of its bytes, read 1 MiB at a time: what `readAll` and a fingerprint of its bytes
    /// give, without holding the file in memory.
    static func statusAndSHA256(_ file: borrowing FileDescriptor, shownAs path: String, limit: Int64?) throws(FileError) -> (status: stat, sha256: String) {
        let descriptor = file.raw
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw error(errno, .stat, path) }
        guard (status.st_mode & S_IFMT) == S_IFREG else { throw .notARegularFile(path: path) }
        if let limit, Int64(status.st_size) > min(limit, maximumSize) { throw .tooLarge(path: path, size: Int64(status.st_size)) }
        var hasher = SHA2Hasher(.sha256)
        var piece = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = piece.withUnsafeMutableBytes { read(descriptor, $0.baseAddress!, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw error(errno, .read, path)
            }
            if count == 0 { break }
            piece.withUnsafeBytes { hasher.update(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
        }
        return (status, SHA256.hex(hasher.finalize()))
    }

    package static func error(_ code: Int32, _ operation: FileOperation, _ path: String) -> FileError {
        switch code {
        case ENOENT, ENOTDIR: .notFound(path: path)
        case EACCES, EPERM: .permissionDenied(path: path)
        case EISDIR: .notARegularFile(path: path)
        default: .system(operation: operation, path: path, errno: code, message: String(cString: strerror(code)))
        }
    }
}

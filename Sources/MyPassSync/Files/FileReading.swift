public import Foundation
#if canImport(Glibc)
internal import Glibc
#endif

/// Reads whole files with plain system calls and typed errors (no Foundation file APIs, whose
/// errors are vague and which follow different rules for symlinks).
public enum FileReading {
    /// Largest file read into memory (4 GiB): a vault is never near this; anything bigger is refused.
    public static let maximumSize: Int64 = 4 << 30

    /// The bytes of the regular file at `path` (symlinks followed unless `followSymlinks` is false: a
    /// symlink is then `notARegularFile`), at most `limit` bytes. Opened non-blocking, so that a FIFO
    /// or device planted under a vault's name is refused at once instead of blocking the reader.
    public static func readAll(atPath path: String, followSymlinks: Bool = true, limit: Int64 = maximumSize) throws(FileError) -> Data {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | (followSymlinks ? 0 : O_NOFOLLOW))
        guard descriptor >= 0 else {
            if errno == ELOOP && !followSymlinks { throw .notARegularFile(path: path) }
            throw error(errno, "open", path)
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw error(errno, "fstat", path) }
        guard (status.st_mode & S_IFMT) == S_IFREG else { throw .notARegularFile(path: path) }
        guard Int64(status.st_size) <= min(limit, maximumSize) else { throw .tooLarge(path: path, size: Int64(status.st_size)) }

        var data = Data(count: Int(status.st_size))
        var offset = 0
        var readError: Int32 = 0
        data.withUnsafeMutableBytes { buffer in
            while offset < buffer.count {
                let count = read(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if count < 0 {
                    if errno == EINTR { continue }
                    readError = errno
                    return
                }
                if count == 0 { break }  // The file shrank while we read it.
                offset += count
            }
        }
        if readError != 0 { throw error(readError, "read", path) }
        if offset < data.count { data.removeSubrange(offset...) }
        return data
    }

    static func error(_ code: Int32, _ operation: String, _ path: String) -> FileError {
        switch code {
        case ENOENT, ENOTDIR: .notFound(path: path)
        case EACCES, EPERM: .permissionDenied(path: path)
        case EISDIR: .notARegularFile(path: path)
        default: .system(operation: operation, path: path, errno: code, message: String(cString: strerror(code)))
        }
    }
}

/// Failures of the file layer, with the path and the system's reason (never file content).
public enum FileError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The path does not exist.
    case notFound(path: String)
    /// The path exists but is not a regular file (a directory, a device, a socket...).
    case notARegularFile(path: String)
    /// Permission denied.
    case permissionDenied(path: String)
    /// The file is larger than this tool will read into memory.
    case tooLarge(path: String, size: Int64)
    /// Any other system call failure: `operation` failed with `errno`.
    case system(operation: FileOperation, path: String, errno: Int32, message: String)

    /// The failure with its path, in one sentence.
    public var description: String {
        switch self {
        case .notFound(let path): "\(path): no such file"
        case .notARegularFile(let path): "\(path): not a regular file"
        case .permissionDenied(let path): "\(path): permission denied"
        case .tooLarge(let path, let size): "\(path): file of \(size) bytes is too large"
        case .system(let operation, let path, _, let message): "\(path): \(operation) failed: \(message)"
        }
    }
}

/// The file operation that failed, as a value (its description is the words a message uses).
public enum FileOperation: String, Sendable, Equatable, CustomStringConvertible {
    case open, read, write, close, rename, stat, lock, encode, create, fsync, keyctl
    case openDirectory = "open directory"
    case makeDirectory = "mkdir"
    case createTemporary = "create temp file"
    case fsyncDirectory = "fsync directory"
    case readSettings = "read settings"
    case removeCopy = "remove the merged conflict copy"
    case addKey = "add_key"

    public var description: String { rawValue }
}

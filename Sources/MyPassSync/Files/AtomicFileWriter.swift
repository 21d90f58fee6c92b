public import Foundation
#if canImport(Glibc)
internal import Glibc
#endif

/// Replaces a file atomically and durably: a 0600 temp file created exclusively in the same
/// directory, written in full, fsynced, renamed over the target, then the directory fsynced. A
/// reader sees the old file or the new one, never a mix; a crash leaves at worst a stray temp file.
public enum AtomicFileWriter {
    /// Prefix of this tool's temp files (recognised and ignored by the watcher, cleaned up later).
    public static let temporaryPrefix = ".mypass-sync-tmp-"

    /// Writes `data` to `path` (symlinks resolved: the target file is replaced). A new file is 0600;
    /// an existing file keeps its mode (never widened).
    public static func write(_ data: Data, toPath path: String) throws(FileError) {
        let target = resolvedPath(path)
        let directory = (target as NSString).deletingLastPathComponent.isEmpty ? "." : (target as NSString).deletingLastPathComponent
        let name = (target as NSString).lastPathComponent
        var existing = stat()
        // An existing file keeps its own permission bits; a new one is owner-only.
        let mode: mode_t = stat(target, &existing) == 0 ? existing.st_mode & 0o777 : 0o600
        let temporary = directory + "/" + temporaryPrefix + name + "-" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw FileReading.error(errno, "create temp file in", directory) }
        var succeeded = false
        defer {
            if !succeeded { unlink(temporary) }
        }
        if let failure = writeAll(data, to: descriptor) {
            close(descriptor)
            throw FileReading.error(failure, "write", temporary)
        }
        if mode != 0o600 { _ = fchmod(descriptor, mode) }
        guard fsync(descriptor) == 0 else {
            let failure = errno
            close(descriptor)
            throw FileReading.error(failure, "fsync", temporary)
        }
        guard close(descriptor) == 0 else { throw FileReading.error(errno, "close", temporary) }
        guard rename(temporary, target) == 0 else { throw FileReading.error(errno, "rename", target) }
        succeeded = true
        syncDirectory(directory)
    }

    /// `path` with symlinks resolved when it exists (so the link's target is what gets replaced).
    static func resolvedPath(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Writes every byte, retrying short writes and EINTR; returns the errno of a failure.
    private static func writeAll(_ data: Data, to descriptor: Int32) -> Int32? {
        var failure: Int32?
        data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                offset += written
            }
        }
        return failure
    }

    private static func syncDirectory(_ directory: String) {
        let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        _ = fsync(descriptor)
        close(descriptor)
    }
}

public import Foundation
#if canImport(Glibc)
internal import Glibc
#endif

/// Replaces a file atomically and durably whatever is there (new output files, explicit
/// overwrites); `DurableFile.replace` with `.onlyIf` is the compare-and-swap save of a vault.
public enum AtomicFileWriter {
    /// Writes `data` to `path` on `fileSystem`, 0600. A symlink at `path` is replaced by the file, never followed.
    public static func write(_ data: Data, toPath path: String, on fileSystem: FileSystem) throws(FileError) {
        do {
            _ = try DurableFile.replace(atPath: path, on: fileSystem, with: data, policy: .anything)
        } catch {
            switch error {
            case .file(let fileError): throw fileError
            case .changedOnDisk, .verificationFailed:
                throw .system(operation: .write, path: path, errno: EIO, message: error.description)
            }
        }
    }
}

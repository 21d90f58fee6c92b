internal import Foundation
#if canImport(Glibc)
internal import Glibc
#endif

/// The checks on the folders the control socket lives in, made by the daemon before it listens and
/// by a client before it sends anything: a folder another user controls could hold a socket of
/// theirs that collects vault paths and decisions, or answers for the daemon.
enum RuntimeFolders {
    /// `runtime` (`$XDG_RUNTIME_DIR`, or `/run/user/UID`) must be an absolute path to a folder of
    /// this user's, not a symlink, that neither group nor others may write.
    static func checkRuntimeDirectory(_ runtime: String) throws(ControlSocket.Failure) {
        guard runtime.hasPrefix("/") else { throw .relativeRuntimeDirectory(runtime) }
        var status = stat()
        guard lstat(runtime, &status) == 0 else {
            if errno == ENOENT || errno == ENOTDIR { throw .noRuntimeDirectory }
            throw .system("stat \(runtime)", errno)
        }
        guard (status.st_mode & S_IFMT) == S_IFDIR else {
            throw .unsafeFolder("the runtime directory \(runtime) is not a folder (a symlink, say); refused")
        }
        guard status.st_uid == getuid() else {
            throw .unsafeFolder("the runtime directory \(runtime) belongs to user \(status.st_uid), not to you; refused")
        }
        guard status.st_mode & (S_IWGRP | S_IWOTH) == 0 else {
            throw .unsafeFolder("the runtime directory \(runtime) may be written by other users (mode \(String(status.st_mode & 0o7777, radix: 8))); "
                                + "refused (chmod go-w \(runtime))")
        }
    }

    /// The socket's `folder` as a client finds it: a folder of this user's, not a symlink, 0700.
    static func checkPrivateFolder(_ folder: String) throws(ControlSocket.Failure) {
        var status = stat()
        guard lstat(folder, &status) == 0 else {
            if errno == ENOENT || errno == ENOTDIR { throw .noDaemon(folder + "/daemon.sock") }
            throw .system("stat \(folder)", errno)
        }
        guard (status.st_mode & S_IFMT) == S_IFDIR, status.st_uid == getuid() else {
            throw .unsafeFolder("\(folder) is not a folder of this user's (a symlink, or another user's); refused, nothing was sent")
        }
        guard status.st_mode & 0o077 == 0 else {
            throw .unsafeFolder("\(folder) is open to other users (mode \(String(status.st_mode & 0o7777, radix: 8)), not 0700); refused, nothing was sent")
        }
    }

    /// Makes `folder` with 0700 and checks it is a folder of this user's, not a symlink, open to
    /// nobody else (made so when it is open).
    static func preparePrivateFolder(_ folder: String) throws(ControlSocket.Failure) {
        if mkdir(folder, 0o700) != 0 && errno != EEXIST { throw .system("mkdir \(folder)", errno) }
        var status = stat()
        guard lstat(folder, &status) == 0 else { throw .system("stat \(folder)", errno) }
        guard (status.st_mode & S_IFMT) == S_IFDIR, status.st_uid == getuid() else {
            throw .unsafeFolder("\(folder) is not a folder of this user's (a symlink, or another user's); refused")
        }
        if status.st_mode & 0o077 != 0 && chmod(folder, 0o700) != 0 { throw .system("chmod \(folder)", errno) }
    }
}

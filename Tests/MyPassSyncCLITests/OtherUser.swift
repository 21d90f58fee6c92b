import Foundation
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A real second user of the machine, made with `useradd` for one test (root only) and removed with
/// `userdel` at the end: the other user a trust check is about.
final class OtherUser {
    let name: String
    let userID: UInt32

    struct Failure: Error, CustomStringConvertible { let description: String }

    init() throws {
        name = "mpsync-" + UUID().uuidString.prefix(8).lowercased()
        let added = try ProcessRunner.run(URL(fileURLWithPath: "/usr/sbin/useradd"),
                                          ["--system", "--no-create-home", "--shell", "/usr/sbin/nologin", "--user-group", name])
        guard added.status == 0 else { throw Failure(description: "useradd \(name) failed: \(added.standardError)") }
        guard let entry = getpwnam(name) else { throw Failure(description: "\(name) was added but is not in the user database") }
        userID = entry.pointee.pw_uid
    }

    deinit {
        _ = try? ProcessRunner.run(URL(fileURLWithPath: "/usr/sbin/userdel"), [name])
    }

    /// Makes `path` a folder of this user's with `mode` (its parents as they are).
    func folder(_ path: String, mode: mode_t) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        guard chown(path, userID, userID) == 0, chmod(path, mode) == 0 else {
            throw Failure(description: "could not give \(path) to \(name): \(String(cString: strerror(errno)))")
        }
    }
}

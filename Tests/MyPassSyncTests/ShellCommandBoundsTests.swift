import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing
import TestSupport
import SyncCredentials
import MyPassCrypto

/// A credential command is the user's, but it is bounded all the same: its whole run (its exit
/// included) within the time limit, its output within a few KiB, and everything it started killed
/// with it.
@Suite("Credential commands are bounded in time and output")
struct ShellCommandBoundsTests {
    /// Whether the process `pid` is gone (or a zombie left to its new parent), waiting up to 3 s.
    static func ends(_ pid: pid_t) -> Bool {
        pollUntil(timeout: 3, interval: 0.01) {
            let state = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8))?.split(separator: " ").dropFirst(2).first
            return state == nil || state == "Z"
        }
    }

    @Test("a command that prints the password, closes its output and keeps running is stopped at the time limit, with what it started")
    func closesOutputAndKeepsRunning() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("shell-bounds-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let pidFile = folder.appendingPathComponent("sleeper.pid").path
        let command = PasswordCommand("printf 'pw\\n'; exec >&-; sleep 600 & echo $! > '\(pidFile)'; wait", timeout: 2)
        let started = Date()
        #expect {
            _ = try command.password()
        } throws: { error in
            guard case PasswordCommand.Failure.timedOut = error else { return false }
            return true
        }
        let took = Date().timeIntervalSince(started)
        #expect(took >= 1.9 && took < 6, "took \(took) s")
        let sleeper = try #require(pid_t(try String(contentsOfFile: pidFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(Self.ends(sleeper), "the command's own child was left running")
    }

    @Test("a command that prints hundreds of megabytes is stopped after the first 64 KiB: no password, nothing kept")
    func printsTooMuch() throws {
        let command = PasswordCommand("head -c 400000000 /dev/zero | tr '\\0' 'x'", timeout: 60)
        let started = Date()
        #expect {
            _ = try command.password()
        } throws: { error in
            guard case PasswordCommand.Failure.printedTooMuch = error else { return false }
            return "\(error)".contains("printed more than 64 KiB")
        }
        #expect(Date().timeIntervalSince(started) < 10)
    }

    @Test("a command within the bounds still gives its first line (a long later line included)")
    func withinBounds() throws {
        let password = try PasswordCommand("printf 'first-line\\n'; head -c 30000 /dev/zero | tr '\\0' 'y'", timeout: 10).password()
        #expect(password == SecureBytes(Data("first-line".utf8)))
    }
}

internal import Foundation
internal import KDBXFormat
internal import MyPassSync

/// `mypass-sync unlock VAULT [--for SECONDS]`: quick unlock for the commands that only read.
struct UnlockCommand: Command {
    let name = "unlock"
    let summary = "Keep the vault's derived key in the kernel keyring: ls, show, search, totp, match and export then need no password."
    let usage = "mypass-sync unlock <vault> [--for <seconds>] [credentials]"
    let options: [OptionSpec] = [
        .value("--for", valueName: "seconds", help: "How long (default 600, at most 86400); `lock` ends it sooner."),
    ] + Credentials.options
    var details: String {
        options.helpSection + """


        The key is the KDF's result for the file's current salt, kept possessor-only with an expiry. Commands that
        write still ask for the password (every save draws a new salt) and then keep the key in step, until the
        same expiry. Credentials given on a command are used instead of the kept key.
        """
    }

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        let parsed = try parse(arguments, options, name, count: 1...1)
        let lifetime = try parsed.value("for").map { text -> TimeInterval in
            guard let seconds = Int(text), seconds >= 1, TimeInterval(seconds) <= QuickUnlock.maximumLifetime else {
                throw CommandLineError.usage(message: "--for takes a number of seconds from 1 to 86400", command: name)
            }
            return TimeInterval(seconds)
        } ?? QuickUnlock.defaultLifetime
        guard QuickUnlock.isAvailable else {
            throw FileError.system(operation: "keyctl", path: "kernel keyring", errno: ENOSYS,
                                   message: "the kernel keyring is not available here (a container may forbid it)")
        }
        let path = parsed.positionals[0]
        let unlocked = try Credentials.openVault(parsed, path: path, command: name)
        let expiry = try QuickUnlock().begin(unlocked.opened, path: path, lifetime: lifetime)
        output.print("\(path.terminalSafe): unlocked until \(QuickUnlockText.time(expiry)) (\(Int(lifetime)) s); `mypass-sync lock` ends it")
        return .success
    }
}

/// `mypass-sync lock VAULT`: ends quick unlock.
struct LockCommand: Command {
    let name = "lock"
    let summary = "End quick unlock of the vault: the kept key is removed from the kernel keyring."
    let usage = "mypass-sync lock <vault>"
    let options: [OptionSpec] = []
    var details: String { "No password needed." }

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        let parsed = try parse(arguments, options, name, count: 1...1)
        let path = parsed.positionals[0]
        let wasOn = QuickUnlock().end(path: path)
        output.print("\(path.terminalSafe): " + (wasOn ? "locked" : "was not unlocked"))
        return .success
    }
}

/// How quick-unlock times are shown.
enum QuickUnlockText {
    /// `expiry` as local wall-clock time, `HH:MM:SS`.
    static func time(_ expiry: Date) -> String {
        let formatter = DateFormatter()
        formatter.dateFormat = "HH:mm:ss"
        return formatter.string(from: expiry)
    }
}

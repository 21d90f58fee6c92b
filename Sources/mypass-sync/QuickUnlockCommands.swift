internal import Foundation
internal import MyPassSync

/// `mypass-sync unlock VAULT [--for SECONDS]`: quick unlock for the commands that only read.
struct UnlockCommand: Command {
    let name = "unlock"
    let summary = "Keep the vault's derived key in the kernel keyring: ls, show, search, totp, match and export then need no password."
    let usage = "mypass-sync unlock <vault> [--for <seconds>] [credentials]"
    let lifetime = Option<Int>.number("--for", valueName: "seconds", help: "How long (default 600, at most 86400); `lock` ends it sooner.",
                                      in: 1...Int(QuickUnlock.maximumLifetime))
    let credentials = CredentialOptions()
    var notes: String {
        """


        The key is the KDF's result for the file's current salt, kept in the session keyring, possessor-only, with
        an expiry. It opens the vault's current version without the password, so what can read it matters: every
        process of this login session (this terminal and anything started from it) can; processes of the same
        user in another session (another SSH login, a service) and other users cannot, and it is never in the
        user keyring. A login without a session keyring of its own (no pam_keyinit) uses the user's default one,
        which any process of the user can join: unlock then warns. Run `lock` when done. Commands that write still ask for the password (every
        save draws a new salt) and then keep the key in step, until the same expiry. Credentials given on a
        command are used instead of the kept key.
        """
    }

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        let parsed = try parse(arguments, count: 1...1)
        let seconds = parsed[lifetime].map(TimeInterval.init) ?? QuickUnlock.defaultLifetime
        guard QuickUnlock.isAvailable else {
            throw FileError.system(operation: .keyctl, path: "kernel keyring", errno: ENOSYS,
                                   message: "the kernel keyring is not available here (a container may forbid it)")
        }
        let path = parsed.positionals[0]
        let unlocked = try credentials.unlock(parsed, path: path, command: name)
        let expiry = try unlocked.beginQuickUnlock(for: seconds)
        if QuickUnlock.isSharedWithEveryProcessOfTheUser {
            output.printError("warning: this login has no session keyring of its own (keyctl show @s: _uid_ses): any process of "
                              + "this user can read the kept key, which opens the vault; `mypass-sync lock` removes it")
        }
        output.print("\(path.terminalSafe): unlocked until \(QuickUnlockText.time(expiry)) (\(Int(seconds)) s); `mypass-sync lock` ends it")
        return .success
    }
}

/// `mypass-sync lock VAULT`: ends quick unlock.
struct LockCommand: Command {
    let name = "lock"
    let summary = "End quick unlock of the vault: the kept key is removed from the kernel keyring."
    let usage = "mypass-sync lock <vault>"
    let notes = "No password needed."

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        let parsed = try parse(arguments, count: 1...1)
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

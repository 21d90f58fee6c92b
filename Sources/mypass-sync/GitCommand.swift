internal import Foundation
internal import MyPassSync

/// `mypass-sync git merge-driver|textconv|install`: a vault kept in a git repository, merged field by
/// field with the common ancestor git hands over, and shown as text by `git diff`.
struct GitCommand: Command {
    let name = "git"
    let summary = "Merge vaults in git (a three-way merge driver with the ancestor), show them to git diff, set both up."
    let usage = "mypass-sync git merge-driver [credentials] -- <ancestor> <current> <other> [<path>]\n"
        + "       mypass-sync git textconv [credentials] -- <file>\n"
        + "       mypass-sync git install [--repo DIR | --global] [credential options]"
    let arguments = """
          merge-driver            After `--`, git's %O %A %B %P: the result is written into <current> only when the merge
                                  succeeded; exit 0 merged, 1 not merged (git then marks a conflict).
          textconv                A stable line-per-property text of the vault (the password and every secret field
                                  masked whatever its flag, attachments by size); a version that
                                  cannot be opened gives one line saying why, exit 0, so `git log -p` goes on.
          install                 Adds `\(GitSetup.attributesLine)` to .gitattributes and the driver and
                                  textconv to the repository's (or, with --global, your) git settings.
        """
    let notes = """
        Credentials come from the options given to install, written into the driver's and textconv's command lines
        (--password-from keyring, --password-command CMD, --key-file F, challenge-response options; never a
        password), or from a prompt on /dev/tty when there is one. Every word after `--` is a file name, `--help`
        included. install writes the settings file git uses (a linked worktree's: the repository's shared
        config; --global: $GIT_CONFIG_GLOBAL, else ~/.gitconfig or ~/.config/git/config) and refuses, exit 6, a
        .gitattributes or settings file that is a symbolic link or not a regular file.
        """
    let repository = Option<String>("--repo", valueName: "dir", help: "install: the repository (default: the current folder's).")
    let global = Flag("--global", help: "install: for every repository of this user (~/.config/git/attributes and --global settings).")
    let credentials = CredentialOptions()

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        // What git fills in (file names a branch may have chosen) comes after `--` and is never
        // parsed: a driver line without it (written by an older version) is refused unparsed.
        let separator = arguments.firstIndex(of: "--")
        if let action = arguments.first, ["merge-driver", "textconv"].contains(action), separator == nil {
            output.printError("mypass-sync: git \(action) without `--` before git's file names; run `mypass-sync git install` again "
                              + "(a file name from a branch must never be read as an option)")
            return action == "merge-driver" ? .differences : .usage
        }
        let options = Array(arguments[..<(separator ?? arguments.endIndex)])
        let data = separator.map { Array(arguments[arguments.index(after: $0)...]) } ?? []
        let parsed = try parse(options, count: 1...1)
        let action = parsed.positionals[0]
        let rest = action == "install" ? Array(parsed.positionals.dropFirst()) + data : data
        switch action {
        case "merge-driver":
            guard (3...4).contains(rest.count) else { throw CommandLineError.usage(message: "merge-driver takes %O %A %B [%P]", command: name) }
            let shown = rest.count == 4 ? rest[3] : rest[1]
            do {
                let credentials = try credentials.credentials(parsed, for: rest[1], command: name)
                let report = try GitMergeDriver.merge(ancestor: rest[0], current: rest[1], other: rest[2], on: CommandFileSystem.current,
                                                      credentials: credentials, settings: DeviceSettings.load())
                output.printError("mypass-sync: merged \(shown.terminalSafe): \(report.sections.flatMap(\.changes).count) change(s) from the other branch")
                return .success
            } catch {
                // Git keeps <current> as it is and marks the conflict.
                output.printError("mypass-sync: \(shown.terminalSafe) not merged: \(error)")
                return .differences
            }
        case "textconv":
            guard rest.count == 1 else { throw CommandLineError.usage(message: "textconv takes one file", command: name) }
            // A blob of any commit, a hostile one's included: opened within the budget for versions from elsewhere.
            // A blob that cannot be opened becomes one line saying why: a failing textconv stops `git log -p`.
            do {
                let unlocked = try credentials.unlockForeign(parsed, path: rest[0], command: name)
                output.emit(VaultTextConversion.text(of: unlocked.vault))
            } catch {
                output.print(Self.unreadableLine(for: error))
            }
            return .success
        case "install":
            guard rest.isEmpty else { throw CommandLineError.usage(message: "install takes options only", command: name) }
            guard !(parsed[global] && parsed[repository] != nil) else {
                throw CommandLineError.usage(message: "--repo and --global exclude each other", command: name)
            }
            let program = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? "mypass-sync"
            let report = try GitSetup.install(repository: parsed[repository], global: parsed[global], program: program,
                                              credentialArguments: try credentials.commandLine(parsed, command: name))
            output.print("\(report.attributesFile): \(GitSetup.attributesLine)")
            output.print("\(report.configFile) (\(report.configScope) git settings): merge.mypass-sync.driver = \(report.driver)")
            output.print("\(report.configFile) (\(report.configScope) git settings): diff.mypass-sync.textconv = \(report.textconv)")
            return .success
        default:
            throw CommandLineError.usage(message: "git takes merge-driver, textconv or install, not \(action.terminalSafe)", command: name)
        }
    }

    /// The one line textconv prints for a version it cannot open: the reason, never a secret
    /// (error descriptions name no key material), on one line whatever the error says.
    static func unreadableLine(for error: any Error) -> String {
        let reason = String(describing: error).terminalSafe
        return "(mypass-sync: this version cannot be shown: \(reason.count > 200 ? reason.prefix(200) + "…" : reason))"
    }
}

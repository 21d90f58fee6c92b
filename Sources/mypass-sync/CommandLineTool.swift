internal import MyPassCore
internal import MyPassSync

/// The entry point: picks the command, runs it, and is the one place that turns errors into
/// messages on standard error and exit codes.
enum CommandLineTool {
    static let toolName = "mypass-sync"

    /// Every command, in the order the help lists them.
    static let commands: [any Command] = [
        MergeCommand(), DiffCommand(), StatusCommand(), ResolveCommand(), WatchCommand(), DaemonCommand(), ConflictsCommand(), InfoCommand(), ExportCommand(), ConvertCommand(),
        TOTPCommand(), MatchCommand(), ListCommand(), ShowCommand(), AddCommand(), EditCommand(), RemoveCommand(), MoveCommand(), SearchCommand(),
        MakeGroupCommand(), RemoveGroupCommand(), EditGroupCommand(), AttachmentImportCommand(), AttachmentExportCommand(), AttachmentRemoveCommand(),
        SyncCommand(), CreateCommand(), GenerateCommand(), DicewareCommand(), EstimateCommand(), AnalyzeCommand(), ClipCommand(), UnlockCommand(), LockCommand(), KeyringCommand(), GitCommand(), ShareCommand(),
        JournalCommand(), UndoCommand(), CompletionCommand(), HelpCommand(), VersionCommand(),
    ]

    /// Runs the tool with `arguments` (without the program name) and returns the exit status.
    static func run(arguments: [String]) -> ExitCode {
        var streams = StandardStreams()
        do {
            return try dispatch(arguments, output: &streams)
        } catch {
            return report(error, output: &streams)
        }
    }

    private static func dispatch(_ arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        guard let first = arguments.first else {
            output.print(overview)
            return .success
        }
        switch first {
        case "-h", "--help":
            output.print(overview)
            return .success
        case "--version":
            output.print(VersionCommand.versionLine)
            return .success
        default:
            guard let command = command(named: first) else {
                throw CommandLineError.usage(message: "unknown command '\(first)'", command: nil)
            }
            let rest = Array(arguments.dropFirst())
            // After `--` every word is data (a file name git hands over may read `--help`).
            let options = rest.prefix { $0 != "--" }
            if options.contains("-h") || options.contains("--help") {
                output.print(command.helpText)
                return .success
            }
            // A process that ends after this one job keeps large values until exit (the system reclaims
            // them at no cost) instead of freeing them object by object beside the job's last steps.
            DeferredRelease.keepsUntilExit = command.endsAfterOneJob(arguments: rest)
            return try command.run(arguments: rest, output: &output)
        }
    }

    /// The command called `name`, if there is one.
    static func command(named name: String) -> (any Command)? {
        commands.first { $0.name == name }
    }

    /// What the tool is for (the help's overview and the man page's DESCRIPTION).
    static let description = """
        Several devices edit one KeePass vault through Syncthing, Dropbox, Nextcloud, a WebDAV or an SFTP server. \
        mypass-sync merges their edits field by field (nothing is lost: a losing value stays in the entry's history), \
        folds sync-conflict copies back in as they appear (watch), keeps a remote copy in step by a verified \
        compare-and-swap (sync), explains and journals every merge (merge --explain, journal, undo), and edits, \
        exports and converts vaults. The vault stays readable by KeePassXC, KeePassDX and every KDBX tool.
        """

    /// The top-level help: what the tool is, the commands, the exit codes.
    static var overview: String {
        let width = commands.map(\.name.count).max() ?? 0
        let list = commands.map { command in
            "  " + command.name.padding(toLength: width + 2) + command.summary
        }.joined(separator: "\n")
        let codes = [0..<4, 4..<7, 7..<ExitCode.meanings.count].map { rows in
            "  " + ExitCode.meanings[rows].map { "\($0.0.rawValue) \($0.1)" }.joined(separator: "   ")
        }.joined(separator: "\n") + "\n  \(ExitCode.signalStatus.code) \(ExitCode.signalStatus.meaning)"
        return """
            OVERVIEW: mypass-sync \(ProductInfo.version) — read, merge and watch KeePass (KDBX) vaults \
            that several devices edit.

            \(description)

            USAGE: \(toolName) <command> [options]

            COMMANDS:
            \(list)

              See '\(toolName) help <command>' for the options of a command.

            OPTIONS:
              -h, --help              Show help (also after a command).
              --version               Show the version.

            EXIT CODES:
            \(codes)
            """
    }

    /// Prints the message for `error` on standard error and returns its exit code.
    static func report(_ error: any Error, output: inout StandardStreams) -> ExitCode {
        if case CommandLineError.usage(let message, let commandName) = error {
            let hint = commandName.map { "\(toolName) help \($0)" } ?? "\(toolName) --help"
            output.printError("error: \(message.terminalSafe)\nSee '\(hint)'.")
            return .usage
        }
        var message = "error: \(String(describing: error).terminalSafe)"
        if let hint = Self.hint(for: error) { message += "\n" + hint }
        output.printError(message)
        return ExitCode(FailureKind(of: error))
    }

    /// What the user can do about `error`, in the CLI's words (its flags), when the library names a remedy.
    private static func hint(for error: any Error) -> String? {
        switch Remedy.of(error) {
        case .otherVersionsCredentials: "Give the other version's credentials with --remote-password-stdin or --remote-key-file."
        case .allowDroppingUnsupported(let version): "--drop-unsupported writes \(version) without exactly that."
        case .serverCredentialsInNetrc: "Put the server's credentials in ~/.netrc or a file given with --netrc-file."
        case .sshKeyLogin: "SFTP logs in with SSH keys: ssh-agent or --identity."
        case .raiseKDFMemoryCap: "If you trust this file, raise the cap with --max-kdf-memory <bytes>."
        case .takeVaultAsBase:
            "If the vault was changed on purpose, open it once with `mypass-sync ls <vault>` (same --state-dir): the version it opens "
                + "becomes this device's base."
        case nil: nil
        }
    }
}

extension String {
    /// `self` padded with spaces to at least `length` characters.
    func padding(toLength length: Int) -> String {
        count >= length ? self : self + String(repeating: " ", count: length - count)
    }


}

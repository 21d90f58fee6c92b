internal import MyPassCore
internal import MyPassSync

/// The entry point: picks the command, runs it, and is the one place that turns errors into
/// messages on standard error and exit codes.
enum CommandLineTool {
    static let toolName = "mypass-sync"

    /// Every command, in the order the help lists them.
    static let commands: [any Command] = [
        MergeCommand(), DiffCommand(), StatusCommand(), ResolveCommand(), WatchCommand(), ConflictsCommand(), InfoCommand(), ExportCommand(), ConvertCommand(),
        TOTPCommand(), MatchCommand(), ListCommand(), ShowCommand(), AddCommand(), EditCommand(), RemoveCommand(), MoveCommand(), SearchCommand(),
        MakeGroupCommand(), RemoveGroupCommand(), EditGroupCommand(), AttachmentImportCommand(), AttachmentExportCommand(), AttachmentRemoveCommand(),
        SyncCommand(), CreateCommand(), GenerateCommand(), DicewareCommand(), EstimateCommand(), AnalyzeCommand(), ClipCommand(), UnlockCommand(), LockCommand(),
        JournalCommand(), UndoCommand(), HelpCommand(), VersionCommand(),
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
            if rest.contains("-h") || rest.contains("--help") {
                output.print(command.helpText)
                return .success
            }
            return try command.run(arguments: rest, output: &output)
        }
    }

    /// The command called `name`, if there is one.
    static func command(named name: String) -> (any Command)? {
        commands.first { $0.name == name }
    }

    /// The top-level help: what the tool is, the commands, the exit codes.
    static var overview: String {
        let width = commands.map(\.name.count).max() ?? 0
        let list = commands.map { command in
            "  " + command.name.padding(toLength: width + 2) + command.summary
        }.joined(separator: "\n")
        return """
            OVERVIEW: mypass-sync \(ProductInfo.version) — read, merge and watch KeePass (KDBX) vaults \
            that several devices edit.

            USAGE: \(toolName) <command> [options]

            COMMANDS:
            \(list)

              See '\(toolName) help <command>' for the options of a command.

            OPTIONS:
              -h, --help              Show help (also after a command).
              --version               Show the version.

            EXIT CODES:
              0 success   1 differences (with --exit-code)   2 usage error   3 wrong credentials
              4 not a KDBX file / unsupported / corrupt   5 decision needed   6 refused for safety
              7 I/O error
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
        if let hint = FailureKind.hint(for: error) { message += "\n" + hint }
        output.printError(message)
        return switch FailureKind(of: error) {
        case .invalidRequest: .usage
        case .wrongCredentials: .wrongCredentials
        case .unreadableVault: .corrupt
        case .refusedForSafety: .refusedForSafety
        case .ioError: .ioError
        }
    }
}

extension String {
    /// `self` padded with spaces to at least `length` characters.
    func padding(toLength length: Int) -> String {
        count >= length ? self : self + String(repeating: " ", count: length - count)
    }
}

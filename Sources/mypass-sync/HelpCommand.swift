internal import MyPassCore

/// `mypass-sync help [COMMAND | --man | --markdown]`: the overview, one command's help, the manual
/// page, or the command reference in Markdown.
struct HelpCommand: Command {
    let name = "help"
    let summary = "Show the help of mypass-sync or of one command (--man: the manual page in roff; --markdown: the command reference)."
    let usage = "mypass-sync help [<command> | --man | --markdown]"
    let arguments = "  <command>               The command to describe."

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        guard arguments.count <= 1 else {
            throw CommandLineError.usage(message: "help takes at most one command name", command: name)
        }
        if arguments == ["--man"] {
            output.emit(ManPage.render())
            return .success
        }
        if arguments == ["--markdown"] {
            output.emit(MarkdownReference.render())
            return .success
        }
        guard let commandName = arguments.first else {
            output.print(CommandLineTool.overview)
            return .success
        }
        guard let command = CommandLineTool.command(named: commandName) else {
            throw CommandLineError.usage(message: "unknown command '\(commandName)'", command: nil)
        }
        output.print(command.helpText)
        return .success
    }
}

/// `mypass-sync completion bash|zsh|fish`: the shell completion script, from the command table.
struct CompletionCommand: Command {
    let name = "completion"
    let summary = "Print the completion script for bash, zsh or fish."
    let usage = "mypass-sync completion <bash|zsh|fish>"
    let notes = """
        bash: source it, or put it in ~/.local/share/bash-completion/completions/mypass-sync. zsh: put it as _mypass-sync \
        in a folder of $fpath. fish: put it in ~/.config/fish/completions/mypass-sync.fish. scripts/install does this. \
        Commands, options, option choices and .kdbx files are completed; entry paths are not (they would need the password).
        """

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        guard arguments.count == 1, let shell = ShellCompletions.Shell(rawValue: arguments[0]) else {
            throw CommandLineError.usage(message: "completion takes one of bash, zsh, fish", command: name)
        }
        output.emit(ShellCompletions.script(for: shell))
        return .success
    }
}

/// `mypass-sync version`: the version line (also `--version`).
struct VersionCommand: Command {
    static var versionLine: String { "mypass-sync \(ProductInfo.version)" }

    let name = "version"
    let summary = "Show the version of mypass-sync."
    let usage = "mypass-sync version"

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        guard arguments.isEmpty else {
            throw CommandLineError.usage(message: "version takes no arguments", command: name)
        }
        output.print(Self.versionLine)
        return .success
    }
}

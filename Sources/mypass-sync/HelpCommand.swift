internal import MyPassCore

/// `mypass-sync help [COMMAND]`: the overview, or one command's help.
struct HelpCommand: Command {
    let name = "help"
    let summary = "Show the help of mypass-sync or of one command."
    let usage = "mypass-sync help [<command>]"
    let arguments = "  <command>               The command to describe."

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        guard arguments.count <= 1 else {
            throw CommandLineError.usage(message: "help takes at most one command name", command: name)
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

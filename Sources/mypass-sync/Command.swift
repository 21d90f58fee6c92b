/// One `mypass-sync` subcommand: its help text and what it does.
protocol Command: Sendable {
    /// The word that selects the command.
    var name: String { get }
    /// One line for the command list.
    var summary: String { get }
    /// The USAGE line(s).
    var usage: String { get }
    /// ARGUMENTS and OPTIONS sections, already formatted.
    var details: String { get }
    /// Runs the command with the words after its name.
    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode
}

extension Command {
    /// The full help text: OVERVIEW, USAGE, then the command's own sections.
    var helpText: String {
        var text = "OVERVIEW: \(summary)\n\nUSAGE: \(usage)\n"
        if !details.isEmpty { text += "\n\(details)\n" }
        return text
    }
}

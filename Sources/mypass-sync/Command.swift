/// One `mypass-sync` subcommand: its help text, its options (declared as properties) and what it does.
protocol Command: Sendable {
    /// The word that selects the command.
    var name: String { get }
    /// One line for the command list.
    var summary: String { get }
    /// The USAGE line(s).
    var usage: String { get }
    /// ARGUMENTS and notes of the help, before and after the OPTIONS section.
    var arguments: String { get }
    var notes: String { get }
    /// Runs the command with the words after its name.
    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode
    /// Whether the process ends after one job with these words (most commands), or keeps working
    /// until it is stopped (`watch`, `daemon`, `sync --watch`): then large values are freed as it
    /// goes (`DeferredRelease`), not kept until exit.
    func endsAfterOneJob(arguments: [String]) -> Bool
}

extension Command {
    var arguments: String { "" }
    var notes: String { "" }
    func endsAfterOneJob(arguments: [String]) -> Bool { true }

    /// Every option the command declares, in declaration order.
    var options: [OptionSpec] { declaredOptions(of: self) }

    /// Sorts `words` into this command's options and its positionals (`count` of them).
    func parse(_ words: [String], count: ClosedRange<Int>) throws -> ParsedArguments {
        try ParsedArguments.parse(words, options: options, command: name, count: count)
    }

    /// The full help text: OVERVIEW, USAGE, ARGUMENTS, OPTIONS, notes.
    var helpText: String {
        var sections = [arguments.isEmpty ? nil : "ARGUMENTS:\n" + arguments, options.isEmpty ? nil : options.helpSection,
                        notes.isEmpty ? nil : notes].compactMap { $0 }
        sections.insert("OVERVIEW: \(summary)\n\nUSAGE: \(usage)", at: 0)
        return sections.joined(separator: "\n\n") + "\n"
    }
}

/// One option a command accepts.
struct OptionSpec: Sendable {
    /// The spellings, long first (`--key-file`, `-k`).
    let names: [String]
    /// The placeholder of its value, or nil for a flag.
    let valueName: String?
    /// One line of help.
    let help: String

    static func flag(_ names: String..., help: String) -> OptionSpec {
        OptionSpec(names: names, valueName: nil, help: help)
    }

    static func value(_ names: String..., valueName: String, help: String) -> OptionSpec {
        OptionSpec(names: names, valueName: valueName, help: help)
    }

    /// The canonical name: the first spelling without leading dashes.
    var key: String { String(names[0].drop { $0 == "-" }) }
}

/// The words of a command line sorted into positionals, flags and option values.
struct ParsedArguments {
    var positionals: [String] = []
    private var values: [String: [String]] = [:]
    private var flags: Set<String> = []

    /// Whether the flag `key` (e.g. "json") was given.
    func flag(_ key: String) -> Bool { flags.contains(key) }

    /// The last value given for `key`, if any.
    func value(_ key: String) -> String? { values[key]?.last }

    /// Every value given for `key`, in order.
    func allValues(_ key: String) -> [String] { values[key] ?? [] }

    /// Sorts `words` for `command`, accepting only `options`; `--name=value` and `--name value` both work,
    /// and `--` ends the options.
    static func parse(_ words: [String], options: [OptionSpec], command: String) throws -> ParsedArguments {
        var result = ParsedArguments()
        var index = 0
        var optionsEnded = false
        while index < words.count {
            let word = words[index]
            index += 1
            if optionsEnded || !word.hasPrefix("-") || word == "-" {
                result.positionals.append(word)
                continue
            }
            if word == "--" {
                optionsEnded = true
                continue
            }
            var name = word
            var inlineValue: String?
            if let equals = word.firstIndex(of: "="), word.hasPrefix("--") {
                name = String(word[..<equals])
                inlineValue = String(word[word.index(after: equals)...])
            }
            guard let spec = options.first(where: { $0.names.contains(name) }) else {
                throw CommandLineError.usage(message: "unknown option '\(name)'", command: command)
            }
            if spec.valueName == nil {
                guard inlineValue == nil else {
                    throw CommandLineError.usage(message: "option '\(name)' takes no value", command: command)
                }
                result.flags.insert(spec.key)
            } else {
                let value: String
                if let inlineValue {
                    value = inlineValue
                } else {
                    guard index < words.count else {
                        throw CommandLineError.usage(message: "option '\(name)' needs a value", command: command)
                    }
                    value = words[index]
                    index += 1
                }
                result.values[spec.key, default: []].append(value)
            }
        }
        return result
    }
}

extension [OptionSpec] {
    /// The OPTIONS section of a help text.
    var helpSection: String {
        let rows = map { spec -> (String, String) in
            let spelling = spec.names.joined(separator: ", ") + (spec.valueName.map { " <\($0)>" } ?? "")
            return (spelling, spec.help)
        }
        let width = Swift.max(24, (rows.map(\.0.count).max() ?? 0) + 2)
        return "OPTIONS:\n" + rows.map { "  " + $0.0.padding(toLength: width) + $0.1 }.joined(separator: "\n")
    }
}

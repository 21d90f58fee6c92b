/// How an option is written and described in the help.
struct OptionSpec: Sendable {
    /// The spellings, long first (`--key-file`, `-k`).
    let names: [String]
    /// The placeholder of its value, or nil for a flag.
    let valueName: String?
    /// One line of help.
    let help: String
    /// Turns the text given into the option's value; nil: not a valid value.
    let convert: @Sendable (String) -> (any Sendable)?
    /// What a valid value is, for the usage error ("a number of bytes").
    let expected: String
}

/// An option a command declares as a property: found by reflection, so each is declared once.
protocol OptionDeclaration: Sendable {
    var spec: OptionSpec { get }
}

/// Options declared together and shared by several commands (credentials, say); a command that
/// holds one as a property accepts all of them.
protocol OptionGroup: Sendable {}

/// A flag: given or not.
struct Flag: OptionDeclaration {
    let spec: OptionSpec

    init(_ names: String..., help: String) {
        spec = OptionSpec(names: names, valueName: nil, help: help, convert: { _ in true }, expected: "")
    }
}

/// An option with a value of type `Value`, checked when the command line is parsed.
struct Option<Value: Sendable>: OptionDeclaration {
    let spec: OptionSpec

    /// An option whose value is any text.
    init(_ names: String..., valueName: String, help: String) where Value == String {
        spec = OptionSpec(names: names, valueName: valueName, help: help, convert: { $0 }, expected: "")
    }

    /// An option whose text `convert` turns into a value (nil: invalid, said as "takes `expected`").
    init(_ names: String..., valueName: String, help: String, expected: String, convert: @escaping @Sendable (String) -> Value?) {
        spec = OptionSpec(names: names, valueName: valueName, help: help, convert: { convert($0) }, expected: expected)
    }

    /// An option whose value is one of the cases of a `String` enum.
    init(_ names: String..., help: String) where Value: RawRepresentable & CaseIterable, Value.RawValue == String {
        let cases = Value.allCases.map(\.rawValue)
        spec = OptionSpec(names: names, valueName: cases.joined(separator: "|"), help: help, convert: { Value(rawValue: $0) },
                          expected: cases.dropLast().joined(separator: ", ") + " or " + (cases.last ?? ""))
    }

    /// A number within `range`.
    static func number(_ names: String..., valueName: String, help: String, in range: ClosedRange<Value>) -> Option
    where Value: FixedWidthInteger {
        Option(names: names, valueName: valueName, help: help, expected: "a number from \(range.lowerBound) to \(range.upperBound)") {
            Value($0).flatMap { range.contains($0) ? $0 : nil }
        }
    }

    /// Seconds within `range`.
    static func seconds(_ names: String..., help: String, in range: ClosedRange<Double>) -> Option where Value == Double {
        Option(names: names, valueName: "seconds", help: help, expected: "seconds (\(range.lowerBound.formatted) to \(range.upperBound.formatted))") {
            Double($0).flatMap { range.contains($0) ? $0 : nil }
        }
    }

    private init(names: [String], valueName: String, help: String, expected: String, convert: @escaping @Sendable (String) -> Value?) {
        spec = OptionSpec(names: names, valueName: valueName, help: help, convert: { convert($0) }, expected: expected)
    }
}

private extension Double {
    var formatted: String { self == rounded() ? String(Int(self)) : String(self) }
}

/// Every option declared by `owner`'s properties (and its option groups'), in declaration order.
func declaredOptions(of owner: Any) -> [OptionSpec] {
    Mirror(reflecting: owner).children.flatMap { child -> [OptionSpec] in
        if let option = child.value as? any OptionDeclaration { return [option.spec] }
        if child.value is any OptionGroup { return declaredOptions(of: child.value) }
        return []
    }
}

/// The words of a command line sorted into positionals and option values, each value already
/// converted to its option's type. Looked up by the option itself, never by a name.
struct ParsedArguments {
    var positionals: [String] = []
    private var values: [String: [any Sendable]] = [:]

    /// Whether `flag` was given.
    subscript(_ flag: Flag) -> Bool { values[flag.spec.names[0]] != nil }

    /// The last value given for `option`, if any.
    subscript<Value>(_ option: Option<Value>) -> Value? { values[option.spec.names[0]]?.last as? Value }

    /// Every value given for `option`, in order.
    func all<Value>(_ option: Option<Value>) -> [Value] { values[option.spec.names[0]]?.compactMap { $0 as? Value } ?? [] }

    /// Sorts `words` for `command`, accepting only `options`; `--name=value` and `--name value` both
    /// work, and `--` ends the options. `count` is how many positionals the command takes.
    static func parse(_ words: [String], options: [OptionSpec], command: String, count: ClosedRange<Int>? = nil) throws -> ParsedArguments {
        var result = ParsedArguments()
        var index = 0
        var optionsEnded = false
        func usage(_ message: String) -> CommandLineError { .usage(message: message, command: command) }
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
                // `-pSECRET`: a short option's glued value may be a secret; never echoed.
                let shown = name.hasPrefix("--") || name.count <= 2 ? name : String(name.prefix(2)) + "…"
                throw usage("unknown option '\(shown)'")
            }
            let text: String
            if spec.valueName == nil {
                guard inlineValue == nil else { throw usage("option '\(name)' takes no value") }
                text = ""
            } else if let inlineValue {
                text = inlineValue
            } else {
                guard index < words.count else { throw usage("option '\(name)' needs a value") }
                text = words[index]
                index += 1
            }
            guard let value = spec.convert(text) else { throw usage("\(spec.names[0]) takes \(spec.expected)") }
            result.values[spec.names[0], default: []].append(value)
        }
        if let count, !count.contains(result.positionals.count) { throw usage("wrong number of arguments") }
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

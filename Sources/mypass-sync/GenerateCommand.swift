internal import MyPassCore

/// `mypass-sync generate [-L N] [-l] [-U] [-n] [-s] [-e] [-x CHARS] [--exclude-similar] [--every-group] [-c CHARS]`.
struct GenerateCommand: Command {
    let name = "generate"
    let summary = "Generate a random password (keepassxc-cli's options; randomness from libsodium)."
    let usage = "mypass-sync generate [-L N] [-l] [-U] [-n] [-s] [-e] [-x CHARS] [--exclude-similar] [--every-group] [-c CHARS]"
    let notes = "Without a class option: lower and upper case letters and digits, as keepassxc-cli."
    let length = Option<Int>.number("--length", "-L", valueName: "n", help: "Length of the password (default 32).", in: 1...1024)
    let lower = Flag("--lower", "-l", help: "Use lower case letters.")
    let upper = Flag("--upper", "-U", help: "Use upper case letters.")
    let numeric = Flag("--numeric", "-n", help: "Use digits.")
    let special = Flag("--special", "-s", help: "Use ASCII punctuation.")
    let extended = Flag("--extended", "-e", help: "Use extended (Latin-1) characters.")
    let exclude = Option<String>("--exclude", "-x", valueName: "chars", help: "Never use these characters.")
    let excludeSimilar = Flag("--exclude-similar", help: "Leave out look-alikes (0 O 1 l I |).")
    let everyGroup = Flag("--every-group", help: "At least one character of every chosen class.")
    let custom = Option<String>("--custom", "-c", valueName: "chars", help: "Use exactly these characters instead of the classes.")

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        let parsed = try parse(arguments, count: 0...0)
        var options = PasswordGenerator.Options()
        options.length = parsed[length] ?? options.length
        let chosen: [(Flag, PasswordGenerator.CharacterClass)] = [(lower, .lower), (upper, .upper), (numeric, .numeric), (special, .special),
                                                                 (extended, .extended)]
        let classes = Set(chosen.filter { parsed[$0.0] }.map(\.1))
        if !classes.isEmpty { options.classes = classes }
        options.excluded = parsed[exclude] ?? ""
        options.excludeSimilar = parsed[excludeSimilar]
        options.everyGroup = parsed[everyGroup]
        options.custom = parsed[custom]
        output.print(try PasswordGenerator.generate(options))
        return .success
    }
}

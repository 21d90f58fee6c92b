internal import Foundation
internal import MyPassCore
internal import MyPassSync
internal import MyPassCrypto

/// `mypass-sync generate [-L N] [-l] [-U] [-n] [-s] [-e] [-x CHARS] [--exclude-similar] [--every-group] [-c CHARS]`.
struct GenerateCommand: Command {
    let name = "generate"
    let summary = "Generate a random password (keepassxc-cli's options; randomness from libsodium)."
    let usage = "mypass-sync generate [-L N] [-l] [-U] [-n] [-s] [-e] [-x CHARS] [--exclude-similar] [--every-group] [-c CHARS]"
    let notes = "Without a class option: lower and upper case letters and digits, as keepassxc-cli. The password goes to standard output, its estimated strength to standard error."
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
        let password = try PasswordGenerator.generate(options)
        output.print(password)
        output.printError(PasswordStrength(of: password).summary)
        return .success
    }
}

/// `mypass-sync diceware [-W N] [-w WORDLIST]`.
struct DicewareCommand: Command {
    let name = "diceware"
    let summary = "Generate a passphrase of random words (EFF's large wordlist; randomness from libsodium)."
    let usage = "mypass-sync diceware [-W N] [-w WORDLIST]"
    let notes = """
        The default wordlist is EFF's large list (7,776 words: 12.9 bits a word) from Debian's diceware package \
        (\(Wordlist.defaultPath)). A wordlist file has one word per line, or dice digits and a word per line; \
        it needs at least \(Wordlist.minimumCount) distinct words. The passphrase goes to standard output, its \
        entropy to standard error.
        """
    let words = Option<Int>.number("--words", "-W", valueName: "n", help: "Number of words (default \(PassphraseGenerator.defaultWordCount)).", in: 1...100)
    let wordlist = Option<String>("--word-list", "-w", valueName: "path", help: "Draw from this wordlist instead.")

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        let parsed = try parse(arguments, count: 0...0)
        let list = try Wordlist.read(from: parsed[wordlist])
        let count = parsed[words] ?? PassphraseGenerator.defaultWordCount
        output.print(try PassphraseGenerator.generate(words: count, from: list))
        output.printError(String(format: "Entropy %.1f bits (%d words from a list of %d)", list.bitsPerWord * Double(count), count, list.words.count))
        return .success
    }
}

/// `mypass-sync estimate [-a]`: the password comes on standard input or at a prompt, never in argv.
struct EstimateCommand: Command {
    let name = "estimate"
    let summary = "Estimate a password's strength with zxcvbn (password on standard input)."
    let usage = "mypass-sync estimate [-a]"
    let notes = """
        Prints keepassxc-cli's line (length, entropy in bits, log10 of the guesses) and the rating KeePassXC \
        gives: poor below 40 bits, weak below 75, good below 100, else excellent. The password is read from \
        standard input (or asked for on a terminal), never taken from the command line, where other users \
        could read it in the process list.
        """
    let advanced = Flag("--advanced", "-a", help: "Also list the parts zxcvbn recognised.")

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        let parsed = try parse(arguments, count: 0...1)
        guard parsed.positionals.isEmpty else {
            throw CommandLineError.usage(message: "give the password on standard input, not as an argument (argv is visible to other users)",
                                         command: name)
        }
        let secret = isatty(STDIN_FILENO) == 1 ? PasswordInput.prompt("Password to estimate: ") : PasswordInput.readStandardInputLine()
        guard let secret else { throw CommandLineError.usage(message: "no password on standard input", command: name) }
        let strength = PasswordStrength(of: String(decoding: secret.unprotectedData(), as: UTF8.self))
        output.print(String(format: "Length %d\tEntropy %.3f\tLog10 %.3f", strength.length, strength.entropyBits, strength.log10Guesses)
                     + "\tStrength \(strength.rating.rawValue)")
        if parsed[advanced] {
            var lines = [String(format: "  Multi-word extra bits %.1f", strength.multipartExtraBits)]
            for part in strength.parts {
                let kind = (part.kind.rawValue + (part.repeated ? "(Rep)" : "")).padding(toLength: 16, withPad: " ", startingAt: 0)
                lines.append("  Type: \(kind) " + String(format: "Length %d\tEntropy %6.3f (%.2f)\t", part.text.count, part.entropyBits,
                                                             part.entropyBits * 0.301029995663981) + part.text.terminalSafe)
            }
            output.print(lines.joined(separator: "\n"))
        }
        return .success
    }
}

extension PasswordStrength {
    /// One line for people: bits and rating.
    var summary: String { String(format: "Entropy %.1f bits", entropyBits) + " (\(rating.rawValue))" }
}

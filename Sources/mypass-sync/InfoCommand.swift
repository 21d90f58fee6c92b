internal import Foundation
internal import KDBXFormat
internal import MyPassSync

/// `mypass-sync info VAULT [--json]`: the header facts, no credentials needed.
struct InfoCommand: Command {
    let name = "info"
    let summary = "Show a vault's format: version, cipher, KDF and its parameters, compression."
    let usage = "mypass-sync info <vault> [--json]"
    let options: [OptionSpec] = [
        .flag("--json", help: "Print one JSON document instead of text."),
    ]
    var details: String {
        """
        ARGUMENTS:
          <vault>                 The .kdbx file. No password is needed: the header is not encrypted.

        \(options.helpSection)
        """
    }

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        let parsed = try ParsedArguments.parse(arguments, options: options, command: name)
        guard parsed.positionals.count == 1 else {
            throw CommandLineError.usage(message: "info takes exactly one vault", command: name)
        }
        let path = parsed.positionals[0]
        let header = try KDBXReader.header(of: FileReading.readAll(atPath: path))
        let facts = HeaderFacts(header)
        if parsed.flag("json") {
            output.print(try JSONText.encode(InfoDocument(file: path, format: facts)))
        } else {
            output.print(facts.humanText(file: path))
        }
        return .success
    }
}

/// The JSON document `info --json` prints.
private struct InfoDocument: Encodable {
    let schema = 1
    let file: String
    let format: HeaderFacts
}

#if canImport(Glibc)
import Glibc
#endif
internal import Foundation
internal import KDBXFormat

/// `mypass-sync export VAULT [--format json|xml]`: the decrypted vault for scripts and migration.
struct ExportCommand: Command {
    let name = "export"
    let summary = "Print the decrypted vault as JSON or KeePass XML (secrets included)."
    let usage = "mypass-sync export <vault> [--format json|xml] [--password-stdin] [--key-file <file>] [--no-password]"
    let options: [OptionSpec] = [
        .value("--format", valueName: "json|xml", help: "json (default; keys as in CLI.md) or xml (KeePass XML export)."),
    ] + Credentials.options
    var details: String {
        """
        ARGUMENTS:
          <vault>                 The .kdbx file.

        \(options.helpSection)

        The output contains every password in plain text; a warning goes to standard error when
        standard output is a terminal.
        """
    }

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        let parsed = try ParsedArguments.parse(arguments, options: options, command: name)
        guard parsed.positionals.count == 1 else {
            throw CommandLineError.usage(message: "export takes exactly one vault", command: name)
        }
        let format = parsed.value("format") ?? "json"
        guard format == "json" || format == "xml" else {
            throw CommandLineError.usage(message: "--format must be json or xml", command: name)
        }
        let opened = try Credentials.openForReading(parsed, path: parsed.positionals[0], state: nil, command: name)
        if isatty(STDOUT_FILENO) == 1 {
            output.printError("warning: the export below contains every secret of the vault in plain text")
        }
        // Written as produced: never the whole document in memory.
        if format == "json" {
            var streams = output
            try ExportStream { streams.emit($0) }.write(opened)
        } else {
            var streams = output
            try KDBXWriter.writePlainXML(opened.vault) { streams.emit(bytes: $0) }
        }
        return .success
    }
}

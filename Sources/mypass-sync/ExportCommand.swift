#if canImport(Glibc)
import Glibc
#endif
internal import MyPassSync

/// `mypass-sync export VAULT [--format json|xml]`: the decrypted vault for scripts and migration.
struct ExportCommand: Command {
    /// The export formats.
    enum Format: String, CaseIterable { case json, xml }

    let name = "export"
    let summary = "Print the decrypted vault as JSON or KeePass XML (secrets included)."
    let usage = "mypass-sync export <vault> [--format json|xml] [--password-stdin] [--key-file <file>] [--no-password]"
    let arguments = "  <vault>                 The .kdbx file."
    let notes = """
        The output contains every password in plain text; a warning goes to standard error when
        standard output is a terminal.
        """
    let format = Option<Format>("--format", help: "json (default; keys schema, format, meta, root, deletedObjects) or xml (KeePass XML export).")
    let credentials = CredentialOptions()

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        let parsed = try parse(arguments, count: 1...1)
        let unlocked = try credentials.unlockForReading(parsed, path: parsed.positionals[0], state: nil, command: name)
        if isatty(STDOUT_FILENO) == 1 {
            output.printError("warning: the export below contains every secret of the vault in plain text")
        }
        // Written as produced: never the whole document in memory.
        var streams = output
        switch parsed[format] ?? .json {
        case .json: try unlocked.exportJSON(bytes: { streams.emit(bytes: $0) })
        case .xml: try unlocked.exportXML { streams.emit(bytes: $0) }
        }
        return .success
    }
}

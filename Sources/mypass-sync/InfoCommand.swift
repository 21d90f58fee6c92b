internal import MyPassSync

/// `mypass-sync info VAULT [--json]`: the header facts, no credentials needed.
struct InfoCommand: Command {
    let name = "info"
    let summary = "Show a vault's format: version, cipher, KDF and its parameters, compression."
    let usage = "mypass-sync info <vault> [--json]"
    let arguments = "  <vault>                 The .kdbx file. No password is needed: the header is not encrypted."
    let json = Flag("--json", help: "Print one JSON document instead of text.")

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        let parsed = try parse(arguments, count: 1...1)
        let path = parsed.positionals[0]
        let format = try VaultFile.format(at: path, on: CommandFileSystem.current)
        if parsed[json] {
            output.print(try JSONText.encode(InfoDocument(file: path, format: format)))
        } else {
            output.print("""
                file:        \(path)
                version:     \(format.versionText)
                cipher:      \(format.cipher)
                kdf:         \(format.kdfText)
                compression: \(format.compression)
                attachments: \(format.attachmentProtectionText)
                """)
        }
        return .success
    }
}

/// The JSON document `info --json` prints.
private struct InfoDocument: Encodable {
    let schema = 1
    let file: String
    let format: VaultFormat
}

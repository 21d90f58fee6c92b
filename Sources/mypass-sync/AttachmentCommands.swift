internal import Foundation
internal import MyPassCore
internal import MyPassSync

/// `mypass-sync attachment-import VAULT ENTRY NAME FILE [--force]`.
struct AttachmentImportCommand: Command {
    let name = "attachment-import"
    let summary = "Attach a file to an entry (the previous version goes to its history)."
    let usage = "mypass-sync attachment-import <vault> <entry-path> <name> <file> [--force] [credentials]"
    let force = Flag("--force", "-f", help: "Replace an attachment of that name.")
    let editing = EditingOptions()

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        let parsed = try parse(arguments, count: 4...4)
        let data = try FileReading.readAll(atPath: parsed.positionals[3], on: CommandFileSystem.current)  // Before the password: a missing file is said first.
        let session = try editing.session(parsed, path: parsed.positionals[0], command: name)
        let entry = try requireEntry(parsed.positionals[1], session.vault, name)
        session.update(try session.vault.attaching(data, named: parsed.positionals[2], to: entry.uuid, replacing: parsed[force]))
        let wrote = try editing.save(session, output: &output)
        output.print(wrote ? "attached \(parsed.positionals[2].terminalSafe) (\(data.count) bytes) to \(parsed.positionals[1].terminalSafe)"
                     : "unchanged: \(parsed.positionals[1].terminalSafe) already has these bytes as \(parsed.positionals[2].terminalSafe)")
        return .success
    }
}

/// `mypass-sync attachment-export VAULT ENTRY NAME [FILE | --stdout]`.
struct AttachmentExportCommand: Command {
    let name = "attachment-export"
    let summary = "Write an entry's attachment to a file (0600, replaced atomically) or to standard output."
    let usage = "mypass-sync attachment-export <vault> <entry-path> <name> (<file> | --stdout) [credentials]"
    let toStandardOutput = Flag("--stdout", help: "Write the bytes to standard output.")
    let editing = EditingOptions()

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        let parsed = try parse(arguments, count: 3...4)
        guard (parsed.positionals.count == 4) != parsed[toStandardOutput] else {
            throw CommandLineError.usage(message: "give either a file or --stdout", command: name)
        }
        let vault = try editing.credentials.unlockForReading(parsed, path: parsed.positionals[0], state: editing.stateOptions.state(parsed),
                                                             command: name).vault
        let entry = try requireEntry(parsed.positionals[1], vault, name)
        guard let data = vault.attachmentData(named: parsed.positionals[2], of: entry) else {
            throw CommandLineError.usage(message: "\(parsed.positionals[1]) has no attachment \(parsed.positionals[2])", command: name)
        }
        if parsed[toStandardOutput] {
            data.withUnsafeBytes { output.emit(bytes: $0) }
        } else {
            try AtomicFileWriter.write(data, toPath: parsed.positionals[3], on: CommandFileSystem.current)
            output.print("wrote \(parsed.positionals[3].terminalSafe) (\(data.count) bytes)")
        }
        return .success
    }
}

/// `mypass-sync attachment-rm VAULT ENTRY NAME`.
struct AttachmentRemoveCommand: Command {
    let name = "attachment-rm"
    let summary = "Remove an attachment from an entry (its history keeps it)."
    let usage = "mypass-sync attachment-rm <vault> <entry-path> <name> [credentials]"
    let editing = EditingOptions()

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        let parsed = try parse(arguments, count: 3...3)
        let session = try editing.session(parsed, path: parsed.positionals[0], command: name)
        let entry = try requireEntry(parsed.positionals[1], session.vault, name)
        session.update(try session.vault.removingAttachment(named: parsed.positionals[2], from: entry.uuid))
        try editing.save(session, output: &output)
        output.print("removed \(parsed.positionals[2].terminalSafe) from \(parsed.positionals[1].terminalSafe)")
        return .success
    }
}

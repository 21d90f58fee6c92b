internal import Foundation
internal import KDBXFormat
internal import MyPassCore
internal import MyPassCrypto
internal import MyPassSync

/// A vault command that takes credentials and the state directory.
let vaultOptions = Credentials.options + [SessionOptions.stateOption, SessionOptions.backupOption]

/// Parses `arguments` and checks the number of positionals.
func parse(_ arguments: [String], _ options: [OptionSpec], _ command: String, count: ClosedRange<Int>) throws -> ParsedArguments {
    let parsed = try ParsedArguments.parse(arguments, options: options, command: command)
    guard count.contains(parsed.positionals.count) else {
        throw CommandLineError.usage(message: "wrong number of arguments", command: command)
    }
    return parsed
}

/// The entry at `path` or a clear error.
func requireEntry(_ path: String, _ vault: Vault, _ command: String) throws -> Entry {
    guard let entry = vault.entry(at: VaultPath(path)) else {
        throw CommandLineError.usage(message: "no entry at \(path)", command: command)
    }
    return entry
}

/// The group at `path` or a clear error.
private func requireGroup(_ path: String, _ vault: Vault, _ command: String) throws -> Group {
    guard let group = vault.group(at: VaultPath(path)) else {
        throw CommandLineError.usage(message: "no group at \(path)", command: command)
    }
    return group
}

/// The new entry password from `--generate [--length N]` or `--entry-password-stdin`, nil when neither.
private func newPassword(_ parsed: ParsedArguments, _ command: String) throws -> String? {
    if parsed.flag("generate") {
        let length = try parsed.value("length").map { text -> Int in
            guard let value = Int(text), (4...1024).contains(value) else {
                throw CommandLineError.usage(message: "--length takes a number from 4 to 1024", command: command)
            }
            return value
        } ?? 24
        return try PasswordGenerator.generate(length: length)
    }
    if parsed.flag("password-prompt") {
        guard let typed = PasswordInput.prompt("Password for the entry: ") else {
            throw CommandLineError.usage(message: "no terminal to ask for the entry's password: use --entry-password-stdin", command: command)
        }
        return String(decoding: typed.unprotectedData(), as: UTF8.self)
    }
    if parsed.flag("entry-password-stdin") {
        guard let line = PasswordInput.readStandardInputLine() else {
            throw CommandLineError.usage(message: "--entry-password-stdin: no line for the entry's password", command: command)
        }
        return String(decoding: line.unprotectedData(), as: UTF8.self)
    }
    return nil
}

private let passwordOptions: [OptionSpec] = [
    .flag("--generate", "-g", help: "Generate a random password."),
    .value("--length", "-L", valueName: "n", help: "Length of the generated password (default 24)."),
    .flag("--entry-password-stdin", help: "The entry's password is the line after the vault password on standard input."),
    .flag("--password-prompt", "-p", help: "Ask for the entry's password on the terminal (echo off)."),
]

/// `mypass-sync ls VAULT [GROUP] [-R]`.
struct ListCommand: Command {
    let name = "ls"
    let summary = "List the groups and entries of a group."
    let usage = "mypass-sync ls <vault> [<group>] [-R] [credentials]"
    let options: [OptionSpec] = [.flag("--recursive", "-R", help: "List subgroups too.")] + vaultOptions
    var details: String { options.helpSection }

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        let parsed = try parse(arguments, options, name, count: 1...2)
        let vault = try Credentials.openForReading(parsed, path: parsed.positionals[0], state: SessionOptions.state(parsed), command: name).vault
        let group = try requireGroup(parsed.positionals.count > 1 ? parsed.positionals[1] : "/", vault, name)
        var lines: [String] = []
        func list(_ group: Group, indent: String) {
            for entry in group.entries { lines.append(indent + entry.title.terminalSafe) }
            for child in group.groups {
                lines.append(indent + child.name.terminalSafe + "/")
                if parsed.flag("recursive") { list(child, indent: indent + "  ") }
            }
        }
        list(group, indent: "")
        if !lines.isEmpty { output.print(lines.joined(separator: "\n")) }
        return .success
    }
}

/// `mypass-sync show VAULT PATH [--reveal]`.
struct ShowCommand: Command {
    let name = "show"
    let summary = "Show an entry (protected fields hidden unless --reveal)."
    let usage = "mypass-sync show <vault> <entry-path> [--reveal] [credentials]"
    let options: [OptionSpec] = [.flag("--reveal", "--show-protected", help: "Print protected fields (the password) too.")] + vaultOptions
    var details: String { options.helpSection }

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        let parsed = try parse(arguments, options, name, count: 2...2)
        let vault = try Credentials.openForReading(parsed, path: parsed.positionals[0], state: SessionOptions.state(parsed), command: name).vault
        let entry = try requireEntry(parsed.positionals[1], vault, name)
        var lines: [String] = []
        for field in entry.fields {
            let value = field.value.isProtected && !parsed.flag("reveal") ? "PROTECTED" : field.value.text
            lines.append("\(field.key.terminalSafe): \(value.terminalSafe)")
        }
        lines.append("Tags: \(entry.tags.joined(separator: ", ").terminalSafe)")
        if !entry.attachments.isEmpty { lines.append("Attachments: \(entry.attachments.map(\.name).joined(separator: ", ").terminalSafe)") }
        lines.append("Modified: \(entry.times.lastModified.iso8601)")
        lines.append("UUID: \(entry.uuid.canonicalString)")
        output.print(lines.joined(separator: "\n"))
        return .success
    }
}

/// `mypass-sync add VAULT PATH [...]`.
struct AddCommand: Command {
    let name = "add"
    let summary = "Add an entry (saved safely: a concurrent change is merged, never overwritten)."
    let usage = "mypass-sync add <vault> <entry-path> [--username U] [--url URL] [--notes TEXT] [--generate [--length N] | --entry-password-stdin]"
    let options: [OptionSpec] = [
        .value("--username", "-u", valueName: "u", help: "The user name."),
        .value("--url", valueName: "url", help: "The URL."),
        .value("--notes", valueName: "text", help: "The notes."),
    ] + passwordOptions + vaultOptions
    var details: String { options.helpSection }

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        let parsed = try parse(arguments, options, name, count: 2...2)
        let session = try SessionOptions.open(parsed, path: parsed.positionals[0], command: name)
        guard let (parent, title) = VaultPath(parsed.positionals[1]).parentAndName else {
            throw CommandLineError.usage(message: "the entry path needs a title", command: name)
        }
        let group = try requireGroup(parent.description, session.vault, name)
        guard session.vault.entry(at: VaultPath(parsed.positionals[1])) == nil else {
            throw CommandLineError.usage(message: "an entry \(parsed.positionals[1]) exists already", command: name)
        }
        let password = try newPassword(parsed, name) ?? ""
        let (vault, _) = try session.vault.addingEntry(
            title: title, userName: parsed.value("username") ?? "", password: password, url: parsed.value("url") ?? "",
            notes: parsed.value("notes") ?? "", to: group.uuid)
        session.update(vault)
        try SessionOptions.saveEdit(session, output: &output)
        output.print("added \(parsed.positionals[1].terminalSafe)")
        return .success
    }
}

/// `mypass-sync edit VAULT PATH [...]`.
struct EditCommand: Command {
    let name = "edit"
    let summary = "Edit an entry (the previous version goes to its history)."
    let usage = "mypass-sync edit <vault> <entry-path> [--title T] [--username U] [--url URL] [--notes TEXT] [--generate [--length N] | --entry-password-stdin]"
    let options: [OptionSpec] = [
        .value("--title", "-t", valueName: "t", help: "A new title."),
        .value("--username", "-u", valueName: "u", help: "A new user name."),
        .value("--url", valueName: "url", help: "A new URL."),
        .value("--notes", valueName: "text", help: "New notes."),
    ] + passwordOptions + vaultOptions
    var details: String { options.helpSection }

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        let parsed = try parse(arguments, options, name, count: 2...2)
        let session = try SessionOptions.open(parsed, path: parsed.positionals[0], command: name)
        let entry = try requireEntry(parsed.positionals[1], session.vault, name)
        let password = try newPassword(parsed, name)
        let protection = session.vault.meta.memoryProtection
        let vault = try session.vault.updatingEntry(entry.uuid) { entry in
            for (key, option) in [("Title", "title"), ("UserName", "username"), ("URL", "url"), ("Notes", "notes")] {
                if let value = parsed.value(option) { entry.setField(key, FieldValue(value, isProtected: protection.protects(key))) }
            }
            if let password { entry.setField("Password", FieldValue(password, isProtected: true)) }
        }
        session.update(vault)
        let wrote = try SessionOptions.saveEdit(session, output: &output)
        output.print(wrote ? "edited \(parsed.positionals[1].terminalSafe)" : "unchanged \(parsed.positionals[1].terminalSafe): the edit changed nothing; the vault was not written")
        return .success
    }
}

/// `mypass-sync rm VAULT PATH [--permanent]`.
struct RemoveCommand: Command {
    let name = "rm"
    let summary = "Move an entry to the recycle bin (or delete it for good with --permanent)."
    let usage = "mypass-sync rm <vault> <entry-path> [--permanent] [credentials]"
    let options: [OptionSpec] = [.flag("--permanent", help: "Delete for good (a tombstone keeps it from coming back).")] + vaultOptions
    var details: String { options.helpSection }

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        let parsed = try parse(arguments, options, name, count: 2...2)
        let session = try SessionOptions.open(parsed, path: parsed.positionals[0], command: name)
        let entry = try requireEntry(parsed.positionals[1], session.vault, name)
        session.update(try session.vault.deletingEntry(entry.uuid, permanently: parsed.flag("permanent")))
        try SessionOptions.saveEdit(session, output: &output)
        output.print(session.vault.path(ofEntry: entry.uuid).map { "moved to \($0.description.terminalSafe)" }
                     ?? "deleted \(parsed.positionals[1].terminalSafe)")
        return .success
    }
}

/// `mypass-sync mv VAULT PATH GROUP`.
struct MoveCommand: Command {
    let name = "mv"
    let summary = "Move an entry to another group."
    let usage = "mypass-sync mv <vault> <entry-path> <group> [credentials]"
    let options: [OptionSpec] = vaultOptions
    var details: String { options.helpSection }

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        let parsed = try parse(arguments, options, name, count: 3...3)
        let session = try SessionOptions.open(parsed, path: parsed.positionals[0], command: name)
        let entry = try requireEntry(parsed.positionals[1], session.vault, name)
        let group = try requireGroup(parsed.positionals[2], session.vault, name)
        session.update(try session.vault.movingEntry(entry.uuid, to: group.uuid))
        guard try SessionOptions.saveEdit(session, output: &output) else {
            output.print("unchanged \(parsed.positionals[1].terminalSafe): already in that group; the vault was not written")
            return .success
        }
        output.print("moved to \((session.vault.path(ofEntry: entry.uuid)?.description ?? parsed.positionals[2]).terminalSafe)")
        return .success
    }
}

/// `mypass-sync search VAULT TERM`.
struct SearchCommand: Command {
    let name = "search"
    let summary = "Find entries whose title, user name, URL, notes or tags contain a term."
    let usage = "mypass-sync search <vault> <term> [credentials]"
    let options: [OptionSpec] = vaultOptions
    var details: String { options.helpSection }

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        let parsed = try parse(arguments, options, name, count: 2...2)
        let vault = try Credentials.openForReading(parsed, path: parsed.positionals[0], state: SessionOptions.state(parsed), command: name).vault
        let paths = vault.searchEntries(parsed.positionals[1]).map { $0.path.description.terminalSafe }
        output.print(paths.isEmpty ? "no entries found" : paths.joined(separator: "\n"))
        return .success
    }
}

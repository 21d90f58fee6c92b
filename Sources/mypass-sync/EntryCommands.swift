internal import Foundation
internal import MyPassCore
internal import MyPassCrypto
internal import MyPassSync

/// The entry at `path` or a clear error.
func requireEntry(_ path: String, _ vault: Vault, _ command: String) throws -> Entry {
    guard let entry = vault.entry(at: VaultPath(path)) else {
        throw CommandLineError.usage(message: "no entry at \(path)", command: command)
    }
    return entry
}

/// How an entry gets a new password: generated, typed, or from standard input.
struct EntryPasswordOptions: OptionGroup {
    let generate = Flag("--generate", "-g", help: "Generate a random password.")
    let length = Option<Int>.number("--length", "-L", valueName: "n", help: "Length of the generated password (default 24).", in: 4...1024)
    let fromStandardInput = Flag("--entry-password-stdin", help: "The entry's password is the line after the vault password on standard input.")
    let prompt = Flag("--password-prompt", "-p", help: "Ask for the entry's password on the terminal (echo off).")

    /// The new password the options ask for; nil when none does.
    func password(_ parsed: ParsedArguments, command: String) throws -> String? {
        if parsed[generate] { return try PasswordGenerator.generate(length: parsed[length] ?? 24) }
        if parsed[prompt] {
            guard let typed = PasswordInput.prompt("Password for the entry: ") else {
                throw CommandLineError.usage(message: "no terminal to ask for the entry's password: use --entry-password-stdin", command: command)
            }
            return String(decoding: typed.unprotectedData(), as: UTF8.self)
        }
        if parsed[fromStandardInput] {
            guard let line = PasswordInput.readStandardInputLine() else {
                throw CommandLineError.usage(message: "--entry-password-stdin: no line for the entry's password", command: command)
            }
            return String(decoding: line.unprotectedData(), as: UTF8.self)
        }
        return nil
    }

    /// The strength line printed after an edit that generated `password` (nil when none was generated).
    func generatedNote(_ password: String?, _ parsed: ParsedArguments) -> String? {
        guard parsed[generate], let password else { return nil }
        return "generated password: \(PasswordStrength(of: password).summary)"
    }
}

/// `mypass-sync ls VAULT [GROUP] [-R]`.
struct ListCommand: Command {
    let name = "ls"
    let summary = "List the groups and entries of a group."
    let usage = "mypass-sync ls <vault> [<group>] [-R] [credentials]"
    let recursive = Flag("--recursive", "-R", help: "List subgroups too.")
    let editing = EditingOptions()
    var notes: String {
        """
        A group ends in /. A title or group name holding / or \\ is printed with it escaped, \\/ and \\\\, as an
        entry path is written in every command: an entry titled "a/b" in /Internet is `show VAULT '/Internet/a\\/b'`.
        """
    }

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        let parsed = try parse(arguments, count: 1...2)
        let vault = try editing.credentials.unlockForReading(parsed, path: parsed.positionals[0], state: editing.stateOptions.state(parsed),
                                                             command: name).vault
        let group = try requireGroup(parsed.positionals.count > 1 ? parsed.positionals[1] : "/", vault, name)
        var lines: [String] = []
        func list(_ group: Group, indent: String) {
            for entry in group.entries { lines.append(indent + VaultPath.escaped(entry.title).terminalSafe + (entry.isExpired() ? " [expired]" : "")) }
            for child in group.groups {
                lines.append(indent + VaultPath.escaped(child.name).terminalSafe + "/")
                if parsed[recursive] { list(child, indent: indent + "  ") }
            }
        }
        list(group, indent: "")
        if !lines.isEmpty { output.print(lines.joined(separator: "\n")) }
        return .success
    }
}

/// `mypass-sync show VAULT PATH [--reveal] [-a NAME]...`.
struct ShowCommand: Command {
    let name = "show"
    let summary = "Show an entry: fields (protected ones hidden unless --reveal), tags, expiry, attachments."
    let usage = "mypass-sync show <vault> <entry-path> [--reveal] [--history] [-a <name>]... [credentials]"
    let reveal = Flag("--reveal", "--show-protected", help: "Print protected fields (the password) too.")
    let history = Flag("--history", help: "Also list the entry's earlier versions, oldest first, with what each changed (protected values hidden unless --reveal).")
    let attributes = Option<String>("--attributes", "-a", valueName: "name", help: "Print only this field's value (protected or not); repeatable.")
    let editing = EditingOptions()

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        let parsed = try parse(arguments, count: 2...2)
        let vault = try editing.credentials.unlockForReading(parsed, path: parsed.positionals[0], state: editing.stateOptions.state(parsed),
                                                             command: name).vault
        let entry = try requireEntry(parsed.positionals[1], vault, name)
        let asked = parsed.all(attributes)
        guard asked.isEmpty else {
            let values = try asked.map { attribute in
                guard let value = entry.field(attribute) else {
                    throw CommandLineError.usage(message: "\(parsed.positionals[1]) has no field \(attribute)", command: name)
                }
                return value.text.terminalSafe
            }
            output.print(values.joined(separator: "\n"))
            return .success
        }
        var lines: [String] = []
        for field in entry.fields {
            let value = field.value.isProtected && !parsed[reveal] ? "PROTECTED" : field.value.text
            lines.append("\(field.key.terminalSafe): \(value.terminalSafe)")
        }
        lines.append("Tags: \(entry.tags.joined(separator: ", ").terminalSafe)")
        lines.append("Expires: " + (entry.times.expires ? entry.times.expiryTime.iso8601 + (entry.isExpired() ? " (expired)" : "") : "never"))
        if !entry.attachments.isEmpty {
            let described = entry.attachments.map { attachment in
                "\(attachment.name) (\(vault.binaries.binaries[attachment.binary]?.data.count ?? 0) bytes)"
            }
            lines.append("Attachments: \(described.joined(separator: ", ").terminalSafe)")
        }
        lines.append("Modified: \(entry.times.lastModified.iso8601)")
        lines.append("UUID: \(entry.uuid.canonicalString)")
        if parsed[history] {
            lines.append("History: \(entry.history.count) earlier version(s)")
            // Each version with the fields in which it differs from the one after it (the last: the current entry).
            for (index, version) in entry.history.enumerated() {
                let next = index + 1 < entry.history.count ? entry.history[index + 1] : entry
                let keys = orderedKeys(version, next).filter { version.effectiveField($0) != next.effectiveField($0) }
                let shown = keys.map { key in
                    let value = version.field(key)
                    let text = value.map { $0.isProtected && !parsed[reveal] ? "PROTECTED" : $0.text } ?? "(none)"
                    return "\(key)=\(text)"
                }
                lines.append("  \(version.times.lastModified.iso8601): " + (shown.isEmpty ? "(fields as the next version)" : shown.joined(separator: ", ")).terminalSafe)
            }
        }
        output.print(lines.joined(separator: "\n"))
        return .success
    }
}

/// The field names of two versions of an entry, the first's order first.
private func orderedKeys(_ first: Entry, _ second: Entry) -> [String] {
    var seen = Set<String>()
    return (first.fields + second.fields).map(\.key).filter { seen.insert($0).inserted }
}

/// `mypass-sync add VAULT PATH [...]`.
struct AddCommand: Command {
    let name = "add"
    let summary = "Add an entry (saved safely: a concurrent change is merged, never overwritten)."
    let usage = "mypass-sync add <vault> <entry-path | group --title T> [--username U] [--url URL] [--notes TEXT] [--generate [--length N] | --entry-password-stdin] [field options]"
    let title = Option<String>("--title", "-t", valueName: "t", help: "The title; the path is then the group (for titles with a slash).")
    let userName = Option<String>("--username", "-u", valueName: "u", help: "The user name.")
    let url = Option<String>("--url", valueName: "url", help: "The URL.")
    let notes = Option<String>("--notes", valueName: "text", help: "The notes.")
    let passwordOptions = EntryPasswordOptions()
    let fieldOptions = EntryFieldOptions()
    let editing = EditingOptions()

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        let parsed = try parse(arguments, count: 2...2)
        let session = try editing.session(parsed, path: parsed.positionals[0], command: name)
        let groupPath: VaultPath
        let entryTitle: String
        if let given = parsed[title] {
            (groupPath, entryTitle) = (VaultPath(parsed.positionals[1]), given)
        } else if VaultPath.endsWithSeparator(parsed.positionals[1]) {
            throw CommandLineError.usage(message: "\(parsed.positionals[1].terminalSafe) ends in '/', which names a group: give the entry's title "
                                         + "after it (a slash inside a title is written \\/)", command: name)
        } else if let (parent, last) = VaultPath(parsed.positionals[1]).parentAndName {
            (groupPath, entryTitle) = (parent, last)
        } else {
            throw CommandLineError.usage(message: "the entry path needs a title", command: name)
        }
        let group = try session.vault.checkNewEntry(titled: entryTitle, in: groupPath)
        let password = try passwordOptions.password(parsed, command: name) ?? ""
        for warning in fieldOptions.argvWarnings(parsed) { output.printError("warning: \(warning)") }
        let change = try fieldOptions.change(parsed, command: name)
        let (vault, uuid) = try session.vault.addingEntry(
            title: entryTitle, userName: parsed[userName] ?? "", password: password, url: parsed[url] ?? "", notes: parsed[notes] ?? "",
            to: group.uuid, change: change)
        session.update(vault)
        try editing.save(session, output: &output)
        output.print("added \((session.vault.path(ofEntry: uuid)?.description ?? entryTitle).terminalSafe)")
        if let note = passwordOptions.generatedNote(password, parsed) { output.print(note) }
        return .success
    }
}

/// `mypass-sync edit VAULT PATH [...]`.
struct EditCommand: Command {
    let name = "edit"
    let summary = "Edit an entry (the previous version goes to its history)."
    let usage = "mypass-sync edit <vault> <entry-path> [--title T] [--username U] [--url URL] [--notes TEXT] [--generate [--length N] | --entry-password-stdin] [field options]"
    let title = Option<String>("--title", "-t", valueName: "t", help: "A new title.")
    let userName = Option<String>("--username", "-u", valueName: "u", help: "A new user name.")
    let url = Option<String>("--url", valueName: "url", help: "A new URL.")
    let notes = Option<String>("--notes", valueName: "text", help: "New notes.")
    let passwordOptions = EntryPasswordOptions()
    let fieldOptions = EntryFieldOptions()
    let editing = EditingOptions()

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        let parsed = try parse(arguments, count: 2...2)
        let session = try editing.session(parsed, path: parsed.positionals[0], command: name)
        let entry = try requireEntry(parsed.positionals[1], session.vault, name)
        let password = try passwordOptions.password(parsed, command: name)
        for warning in fieldOptions.argvWarnings(parsed) { output.printError("warning: \(warning)") }
        var change = try fieldOptions.change(parsed, command: name)
        let standard = [(EntryField.title, title), (EntryField.userName, userName), (EntryField.url, url), (EntryField.notes, notes)].compactMap { key, option in
            parsed[option].map { (name: key, value: $0) }
        }
        change.setFields = standard + (password.map { [(name: EntryField.password, value: $0)] } ?? []) + change.setFields
        let protection = session.vault.meta.memoryProtection
        let vault = try session.vault.updatingEntry(entry.uuid) { entry in try change.apply(to: &entry, protection: protection) }
        session.update(vault)
        let wrote = try editing.save(session, output: &output)
        output.print(wrote ? "edited \(parsed.positionals[1].terminalSafe)" : "unchanged \(parsed.positionals[1].terminalSafe): the edit changed nothing; the vault was not written")
        if wrote, let note = passwordOptions.generatedNote(password, parsed) { output.print(note) }
        return .success
    }
}

/// `mypass-sync rm VAULT PATH [--permanent]`.
struct RemoveCommand: Command {
    let name = "rm"
    let summary = "Move an entry to the recycle bin (or delete it for good with --permanent)."
    let usage = "mypass-sync rm <vault> <entry-path> [--permanent] [credentials]"
    let permanent = Flag("--permanent", help: "Delete for good (a tombstone keeps it from coming back).")
    let editing = EditingOptions()

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        let parsed = try parse(arguments, count: 2...2)
        let session = try editing.session(parsed, path: parsed.positionals[0], command: name)
        let entry = try requireEntry(parsed.positionals[1], session.vault, name)
        session.update(try session.vault.deletingEntry(entry.uuid, permanently: parsed[permanent]))
        try editing.save(session, output: &output)
        output.print(session.vault.path(ofEntry: entry.uuid).map { "moved to \($0.description.terminalSafe)" }
                     ?? "deleted \(parsed.positionals[1].terminalSafe)")
        return .success
    }
}

/// `mypass-sync mv VAULT PATH GROUP`.
struct MoveCommand: Command {
    let name = "mv"
    let summary = "Move an entry, or a group with everything in it, to another group."
    let usage = "mypass-sync mv <vault> <entry-or-group-path> <group> [credentials]"
    let notes = "A group cannot move into itself or below itself."
    let editing = EditingOptions()

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        let parsed = try parse(arguments, count: 3...3)
        let session = try editing.session(parsed, path: parsed.positionals[0], command: name)
        let destination = try requireGroup(parsed.positionals[2], session.vault, name)
        let moved: () -> String?
        if let entry = session.vault.entry(at: VaultPath(parsed.positionals[1])) {
            session.update(try session.vault.movingEntry(entry.uuid, to: destination.uuid))
            moved = { session.vault.path(ofEntry: entry.uuid)?.description }
        } else if let group = session.vault.group(at: VaultPath(parsed.positionals[1])) {
            session.update(try session.vault.movingGroup(group.uuid, to: destination.uuid))
            moved = { session.vault.path(ofGroup: group.uuid)?.description }
        } else {
            throw CommandLineError.usage(message: "no entry or group at \(parsed.positionals[1])", command: name)
        }
        guard try editing.save(session, output: &output) else {
            output.print("unchanged \(parsed.positionals[1].terminalSafe): already in that group; the vault was not written")
            return .success
        }
        output.print("moved to \((moved() ?? parsed.positionals[2]).terminalSafe)")
        return .success
    }
}

/// `mypass-sync search VAULT TERM`.
struct SearchCommand: Command {
    let name = "search"
    let summary = "Find entries whose title, user name, URL, notes, tags or unprotected custom fields contain a term (expired ones marked)."
    let usage = "mypass-sync search <vault> <term> [credentials]"
    let editing = EditingOptions()

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        let parsed = try parse(arguments, count: 2...2)
        let vault = try editing.credentials.unlockForReading(parsed, path: parsed.positionals[0], state: editing.stateOptions.state(parsed),
                                                             command: name).vault
        let paths = vault.searchEntries(parsed.positionals[1]).map { $0.path.description.terminalSafe + ($0.entry.isExpired() ? " [expired]" : "") }
        output.print(paths.isEmpty ? "no entries found" : paths.joined(separator: "\n"))
        return .success
    }
}

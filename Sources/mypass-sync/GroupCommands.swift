internal import MyPassCore
internal import MyPassSync

/// The group at `path` or a clear error.
func requireGroup(_ path: String, _ vault: Vault, _ command: String) throws -> Group {
    guard let group = vault.group(at: VaultPath(path)) else {
        throw CommandLineError.usage(message: "no group at \(path)", command: command)
    }
    return group
}

/// `mypass-sync mkdir VAULT GROUP`.
struct MakeGroupCommand: Command {
    let name = "mkdir"
    let summary = "Add a group (its parent must exist, as with keepassxc-cli)."
    let usage = "mypass-sync mkdir <vault> <group-path> [credentials]"
    let editing = EditingOptions()

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        let parsed = try parse(arguments, count: 2...2)
        let session = try editing.session(parsed, path: parsed.positionals[0], command: name)
        session.update(try session.vault.addingGroup(at: VaultPath(parsed.positionals[1])).vault)
        try editing.save(session, output: &output)
        output.print("added group \(parsed.positionals[1].terminalSafe)")
        return .success
    }
}

/// `mypass-sync rmdir VAULT GROUP [--permanent]`.
struct RemoveGroupCommand: Command {
    let name = "rmdir"
    let summary = "Move a group with everything in it to the recycle bin (or delete it for good)."
    let usage = "mypass-sync rmdir <vault> <group-path> [--permanent] [credentials]"
    let notes = "Without a recycle bin, or in it, or with --permanent: deleted, with a tombstone for every group and entry below."
    let permanent = Flag("--permanent", help: "Delete for good (tombstones keep it all from coming back).")
    let editing = EditingOptions()

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        let parsed = try parse(arguments, count: 2...2)
        let session = try editing.session(parsed, path: parsed.positionals[0], command: name)
        let group = try requireGroup(parsed.positionals[1], session.vault, name)
        session.update(try session.vault.deletingGroup(group.uuid, permanently: parsed[permanent]))
        try editing.save(session, output: &output)
        output.print(session.vault.path(ofGroup: group.uuid).map { "moved to \($0.description.terminalSafe)" }
                     ?? "deleted \(parsed.positionals[1].terminalSafe)")
        return .success
    }
}

/// `mypass-sync edit-group VAULT GROUP [--name N] [--notes T] [--icon N]`.
struct EditGroupCommand: Command {
    let name = "edit-group"
    let summary = "Rename a group, or change its notes or icon."
    let usage = "mypass-sync edit-group <vault> <group-path> [--name N] [--notes T] [--icon N] [credentials]"
    let newName = Option<String>("--name", "-n", valueName: "name", help: "A new name.")
    let notes = Option<String>("--notes", valueName: "text", help: "New notes.")
    let icon = Option<Int>.number("--icon", valueName: "n", help: "A standard KeePass icon (0-68).", in: 0...EntryChange.maximumIcon)
    let editing = EditingOptions()

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        let parsed = try parse(arguments, count: 2...2)
        let session = try editing.session(parsed, path: parsed.positionals[0], command: name)
        let group = try requireGroup(parsed.positionals[1], session.vault, name)
        if let newName = parsed[newName] { try session.vault.checkGroupName(newName, for: group.uuid) }
        session.update(try session.vault.updatingGroup(group.uuid) { edited in
            if let newName = parsed[newName] { edited.name = newName }
            if let notes = parsed[notes] { edited.notes = notes }
            if let icon = parsed[icon] {
                edited.iconID = icon
                edited.customIconUUID = nil
            }
        })
        let wrote = try editing.save(session, output: &output)
        output.print(wrote ? "edited group \(parsed.positionals[1].terminalSafe)"
                     : "unchanged \(parsed.positionals[1].terminalSafe): the edit changed nothing; the vault was not written")
        return .success
    }
}

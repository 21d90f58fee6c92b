internal import Foundation
internal import MyPassCore
internal import MyPassCrypto
internal import MyPassSync

/// `mypass-sync share ls|add|remove|approve|sync`: KeePassXC's shared groups (KeeShare).
struct ShareCommand: Command {
    let name = "share"
    let summary = "Share a group through a container file, as KeePassXC's KeeShare does (list, add, remove, approve, sync)."
    let usage = """
        mypass-sync share ls <vault> [--json] [credentials]
               mypass-sync share add <vault> <group> (--import-from | --export-to | --sync-with) <container> [container password] [credentials]
               mypass-sync share remove <vault> <group> [credentials]
               mypass-sync share approve <vault> <group> [credentials]
               mypass-sync share sync <vault> [--dry-run] [--explain] [--json] [credentials]
        """
    let arguments = """
          ls|add|remove|approve|sync  What to do.
          <vault>                 The .kdbx file.
          <group>                 The shared group's path (/Family).
        """
    let notes = """
        A shared group's reference (KeePassXC's `KeeShare/Reference` in the group's custom data: import, export or both,
        the container's path relative to the vault or absolute, and the container's password, all inside the encrypted
        vault) is read and written as KeePassXC does, so one group can be shared between KeePassXC and mypass-sync.
        Import merges the container into the group three-way, against the container version this device last imported
        or exported (kept in the state directory): nothing outside the group is touched, the container's tombstones of
        objects outside the group are ignored, and a deletion in the container never destroys an edit made here that its
        writer did not see. Export writes the group's subtree only (subgroups kept), a container changed meanwhile merged
        first, by compare-and-swap, never through a link; only `.kdbx` containers (KeePassXC's signed `.kdbx.share` is
        refused). A reference is a write target: one that arrives in a vault from elsewhere does nothing until
        `share approve` on this device (`share add` approves its own). The watcher and the daemon run `share sync`.
        Exit codes as for merge: 3 when a container does not open with its password, 6 when one is refused (a link, beyond
        the budget for outside files); `share sync` exits with the code of the first share that failed, after the others.
        """
    let importFrom = Option<String>("--import-from", valueName: "container", help: "add: merge this container into the group.")
    let exportTo = Option<String>("--export-to", valueName: "container", help: "add: write the group to this container.")
    let syncWith = Option<String>("--sync-with", valueName: "container", help: "add: both (KeePassXC's synchronize).")
    let containerPasswordCommand = Option<String>("--container-password-command", valueName: "cmd",
                                                  help: "add: run CMD with /bin/sh -c; its first line is the container's password.")
    let containerPasswordFrom = Option<PasswordStore>("--container-password-from",
                                                      help: "add: keyring: the password stored with `keyring store` for the container's database.")
    let containerPasswordStdin = Flag("--container-password-stdin",
                                      help: "add: the container's password is the next line of standard input (after the vault's with --password-stdin).")
    let dryRun = Flag("--dry-run", help: "sync: write nothing; print what would change.")
    let explain = Flag("--explain", help: "sync: show how each differing property of an import was decided.")
    let json = Flag("--json", help: "ls, sync: one JSON document (schema 1).")
    let editing = EditingOptions()

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        let parsed = try parse(arguments, count: 2...3)
        let action = parsed.positionals[0]
        let groupArgument = parsed.positionals.count == 3 ? parsed.positionals[2] : nil
        func needsGroup() throws -> String {
            guard let groupArgument else { throw CommandLineError.usage(message: "share \(action) needs a group", command: name) }
            return groupArgument
        }
        guard ["ls", "add", "remove", "approve", "sync"].contains(action) else {
            throw CommandLineError.usage(message: "share takes ls, add, remove, approve or sync, not \(action.terminalSafe)", command: name)
        }
        if action == "add" { _ = try addition(parsed) }
        if ["ls", "sync"].contains(action), groupArgument != nil {
            throw CommandLineError.usage(message: "share \(action) takes the vault only", command: name)
        }
        let session = try editing.session(parsed, path: parsed.positionals[1], command: name)
        let shares = ShareSync(vaultPath: session.path, state: session.state)
        switch action {
        case "ls":
            ShareReport.list(shares.shares(of: session.vault), json: parsed[json], output: &output)
        case "add":
            let group = try requireGroup(try needsGroup(), session.vault, name)
            let (mode, container) = try addition(parsed)
            let password = try containerPassword(parsed, container: container, vaultPath: session.path)
            let reference = ShareReference(mode: mode, containerPath: container, password: password)
            try checkContainer(of: reference, with: shares)
            session.update(try ShareSync.sharing(group.uuid, of: session.vault, with: reference))
            try editing.save(session, output: &output)
            try shares.approve(group.uuid, in: session.vault)
            output.print("shared \(group.name.terminalSafe) (\(mode.rawValue)) with \(container.terminalSafe); approved on this device")
        case "remove":
            let group = try requireGroup(try needsGroup(), session.vault, name)
            guard group.shareReferenceText != nil else { throw CommandLineError.usage(message: "\(group.name.terminalSafe) is not shared", command: name) }
            session.update(try ShareSync.unsharing(group.uuid, of: session.vault))
            try editing.save(session, output: &output)
            shares.forget(group.uuid)
            output.print("\(group.name.terminalSafe) is no longer shared; the container was left as it is")
        case "approve":
            let group = try requireGroup(try needsGroup(), session.vault, name)
            try shares.approve(group.uuid, in: session.vault)
            output.print("approved the share of \(group.name.terminalSafe) on this device")
        default:
            let pass = try session.syncShares(dryRun: parsed[dryRun], explaining: parsed[explain] ? try SecretFingerprint.forOneMerge() : nil,
                                              copyNaming: DeviceSettings.load().copyNaming)
            ShareReport.sync(pass, json: parsed[json], explain: parsed[explain], dryRun: parsed[dryRun], output: &output)
            // The first failing share's kind, as the command would exit had it failed alone (a link or a
            // budget: refused for safety; a container that does not open: wrong credentials).
            if let failure = pass.outcomes.lazy.compactMap(\.failure).first { return ExitCode(failure) }
        }
        return .success
    }

    /// Throws unless the container is a `.kdbx` name and, where it exists, opens with the password.
    private func checkContainer(of reference: ShareReference, with shares: ShareSync) throws {
        let checked = Result { () throws(ContainerFile.Refusal) in try shares.checkContainer(of: reference) }
        guard case .failure(let refusal) = checked else { return }
        if case .doesNotOpen(let why) = refusal { throw ShareAddFailure.containerDoesNotOpen(why) }
        throw refusal
    }

    /// The mode and container `add` was given: exactly one of the three options.
    private func addition(_ parsed: ParsedArguments) throws -> (ShareMode, String) {
        let given = [(ShareMode.importing, parsed[importFrom]), (.exporting, parsed[exportTo]), (.synchronizing, parsed[syncWith])]
            .compactMap { mode, path in path.map { (mode, $0) } }
        guard given.count == 1, let (mode, container) = given.first, !container.isEmpty else {
            throw CommandLineError.usage(message: "share add needs one of --import-from, --export-to or --sync-with", command: name)
        }
        let lowered = container.lowercased()
        guard lowered.hasSuffix(".kdbx") else {
            throw CommandLineError.usage(message: lowered.hasSuffix(".share") ? "signed KeeShare containers (.kdbx.share) are not supported"
                                         : "a container must be a .kdbx file", command: name)
        }
        return (mode, container)
    }

    /// The container's password: a command, the keyring (for an existing container), or standard input.
    private func containerPassword(_ parsed: ParsedArguments, container: String, vaultPath: String) throws -> ProtectedValue {
        let sources = [parsed[containerPasswordCommand] != nil, parsed[containerPasswordFrom] != nil, parsed[containerPasswordStdin]].filter { $0 }.count
        guard sources == 1 else {
            throw CommandLineError.usage(message: "share add needs one of --container-password-command, --container-password-from keyring "
                                         + "or --container-password-stdin", command: name)
        }
        let resolved = ShareReference(mode: .importing, containerPath: container, password: ProtectedValue("")).resolvedContainerPath(vaultPath: vaultPath)
        let password: SecureBytes
        if let line = parsed[containerPasswordCommand] {
            password = try PasswordCommand(line).password()
        } else if parsed[containerPasswordFrom] != nil {
            password = try DesktopKeyring.unlock(try VaultFile.read(resolved, on: CommandFileSystem.current), keyFile: nil).password
        } else {
            guard let line = PasswordInput.readStandardInputLine() else {
                throw CommandLineError.usage(message: "--container-password-stdin: no line for the container's password on standard input", command: name)
            }
            password = line
        }
        return password.withUnsafeBytes { ProtectedValue(maskingUTF8: Array($0)) }
    }
}

/// `share add` given a container that exists and does not open with the password given.
enum ShareAddFailure: Error, CustomStringConvertible, ClassifiedFailure {
    case containerDoesNotOpen(String)

    var description: String {
        switch self {
        case .containerDoesNotOpen(let why): "the container exists and does not open with that password: \(why); nothing was written"
        }
    }

    var failureKind: FailureKind { .wrongCredentials }
}

internal import Dispatch
internal import Foundation
internal import MyPassSync
#if canImport(Glibc)
import Glibc
#endif

/// Desktop notices for a vault: on or off.
enum NoticeSwitch: String, CaseIterable, Sendable { case on, off }

/// `mypass-sync daemon add|remove|list|run|status|pause|resume|decide`: one process for every
/// vault. The configuration, the engines, the socket and the notices are the library's
/// (`DaemonConfiguration`, `VaultDaemon`, `ControlSocket`, `DesktopNotifier`); this reads the
/// command line and prints.
struct DaemonCommand: Command {
    func endsAfterOneJob(arguments: [String]) -> Bool { arguments.first != "run" }
    let name = "daemon"
    let summary = "One process for every vault: configure vaults, run the daemon, ask its status, pause, resume, decide."
    let usage = """
        mypass-sync daemon add <vault> (--password-command CMD | --password-from keyring | --no-password) [--key-file F] \
        [--yubikey S | --challenge-response-secret F | --challenge-response-command CMD] [--policy merge|reload|ask] \
        [--conflict-copies merge|report|ignore] [--poll SECONDS] [--copy-grace SECONDS] [--rebuild-grace SECONDS] [--notify on|off]
               mypass-sync daemon remove <vault>
               mypass-sync daemon list [--json]
               mypass-sync daemon run [--json] [--state-dir DIR]
               mypass-sync daemon status [--json]
               mypass-sync daemon pause|resume <vault>
               mypass-sync daemon decide <vault> reload|overwrite|merge
        """
    let arguments = """
          add|remove|list|run|status|pause|resume|decide   What to do.
          <vault>                 The .kdbx file.
        """
    let notes = """
        add checks that the credentials open the vault (exit 3 and nothing added otherwise), then writes a
        [vault PATH] section to $XDG_CONFIG_HOME/mypass-sync/daemon.conf (~/.config/mypass-sync/daemon.conf) with
        references only: the password command, `password-from = keyring`, the key file's path, the challenge-response
        source; never a password. A running daemon rereads the file at once. A line of the file that cannot be used is
        named with its number and skipped; add and remove refuse to rewrite a file that has such lines. Sections naming
        one real file under different spellings (/./, //, a symlinked folder) are one vault: the first is used, the
        later ones are named as problems and skipped; add of a vault configured under another spelling updates that
        section, and pause, resume, decide and remove find a vault by any spelling.

        run watches every configured vault with the rules of `watch` (one inotify instance, one engine per vault: a
        vault whose key changed or whose file cannot be read does not stop the others), obtains each vault's
        credentials once, serves the control socket $XDG_RUNTIME_DIR/mypass-sync/daemon.sock (its folder 0700; a peer
        of another user is refused), sends desktop notices (app name mypass-sync: a conflict copy merged, a decision
        needed, a refusal, an error; the copies of a burst, merged or not, are one notice of at most 1,000
        characters, names cut and controls escaped; never a value), rereads the configuration on
        SIGHUP, and on SIGTERM finishes a write in progress and exits 0. contrib/systemd/mypass-sync.service runs it
        as a user service.

        The runtime directory ($XDG_RUNTIME_DIR, else /run/user/UID) must be an absolute path to a folder of yours, not a
        symlink, that others may not write, and the socket's folder yours and 0700: otherwise run and every request
        refuse (exit 6; a relative XDG_RUNTIME_DIR exit 2). A request is sent only to a daemon running as you
        (SO_PEERCRED; another user's: exit 6, nothing sent). A watched vault that becomes a symlink is neither read nor
        written through (an error event and notice, once) until a regular file is in its place again.

        status, pause, resume and decide ask the running daemon; with none running they fail with exit 7. A paused
        vault is neither read nor written until resumed, also by a daemon started again (the pause is kept in the
        sync state). decide answers a vault under --policy ask: reload takes the
        disk's version, overwrite writes this device's over it (the disk's kept as a backup), merge merges them. It
        also answers a version the watcher refused under any policy: for a rollback to an older version merge puts
        this device's newer values back into it, reload takes it as it is, overwrite writes this device's over it;
        for another database reload takes it and overwrite puts this device's back; what reload drops of this
        device's is kept on this device with the merged copies (conflicts VAULT --merged). A decision is about the
        version its notice or status named: if the vault changed since, nothing is done. A request the daemon
        refuses (a vault not configured, no decision waiting) or a decision that fails exits 2.
        """
    let passwordCommand = Option<String>("--password-command", valueName: "cmd",
                                         help: "add: run CMD with /bin/sh -c each time the daemon starts the vault; its first line is the password.")
    let passwordFrom = Option<PasswordStore>("--password-from", help: "add: keyring: the password stored with `keyring store`.")
    let noPassword = Flag("--no-password", help: "add: the vault has no password (key file only).")
    let keyFile = Option<String>("--key-file", "-k", valueName: "file", help: "add: the key file (its path is kept, not its bytes).")
    let challenge = ChallengeResponseOptions()
    let policy = Option<VaultWatcher.Policy>("--policy", help: "add: on an external change: merge (default), reload, or ask (then `daemon decide`).")
    let copyPolicy = Option<VaultWatcher.CopyPolicy>("--conflict-copies", help: "add: sync-conflict copies: fold in (default), report, ignore.")
    let poll = Option<Double>.seconds("--poll", help: "add: also compare fingerprints every SECONDS (NFS, SMB, sshfs, FUSE).", in: 0.01...86_400)
    let copyGrace = Option<Double>.seconds("--copy-grace", help: "add: leave a copy made on another device to it this long (default 0).", in: 0...3600)
    let rebuildGrace = Option<Double>.seconds("--rebuild-grace", help: "add: leave another device this long to rebuild a vault renamed aside (default 3600).",
                                              in: 0...(30 * 24 * 3600))
    let notify = Option<NoticeSwitch>("--notify", help: "add: desktop notices for this vault (default on).")
    let json = Flag("--json", help: "list, status: one JSON document (schema 1); run: the watch events, one JSON line each.")
    let stateOptions = StateOptions()

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        let parsed = try parse(arguments, count: 1...3)
        let action = parsed.positionals[0]
        let rest = Array(parsed.positionals.dropFirst())
        func expect(_ count: Int, _ what: String) throws {
            guard rest.count == count else { throw CommandLineError.usage(message: "daemon \(action) takes \(what)", command: name) }
        }
        switch action {
        case "add":
            try expect(1, "one vault")
            return try add(rest[0], parsed, output: &output)
        case "remove":
            try expect(1, "one vault")
            return try remove(rest[0], state: try stateOptions.state(parsed), output: &output)
        case "list":
            try expect(0, "no vault")
            return try list(json: parsed[json], output: &output)
        case "run":
            try expect(0, "no vault")
            return try DaemonRun(json: parsed[json], state: try stateOptions.state(parsed)).run()
        case "status":
            try expect(0, "no vault")
            return try status(json: parsed[json], output: &output)
        case "pause", "resume":
            try expect(1, "one vault")
            return try request(action == "pause" ? .pause(vault: Self.absolute(rest[0])) : .resume(vault: Self.absolute(rest[0])), output: &output)
        case "decide":
            try expect(2, "a vault and reload, overwrite or merge")
            guard let decision = SyncSession.Decision(rawValue: rest[1]) else {
                throw CommandLineError.usage(message: "daemon decide takes reload, overwrite or merge, not \(rest[1].terminalSafe)", command: name)
            }
            return try request(.decide(vault: Self.absolute(rest[0]), decision), output: &output)
        default:
            throw CommandLineError.usage(message: "daemon takes add, remove, list, run, status, pause, resume or decide, not \(action.terminalSafe)",
                                         command: name)
        }
    }

    /// The vault's path as the configuration keeps it: absolute, symlinks resolved.
    static func absolute(_ path: String) -> String {
        DurableFile.canonicalPath(URL(fileURLWithPath: path).standardizedFileURL.path, on: CommandFileSystem.current)
    }

    /// The credential references the options give (paths made absolute).
    private func reference(_ parsed: ParsedArguments) throws -> CredentialReference {
        let sources = [parsed[passwordCommand] != nil, parsed[passwordFrom] != nil, parsed[noPassword]].filter { $0 }.count
        guard sources == 1 else {
            throw CommandLineError.usage(message: "daemon add takes exactly one of --password-command, --password-from keyring, --no-password "
                                         + "(the daemon asks no one: a typed password cannot be kept)", command: name)
        }
        var reference = CredentialReference()
        if let line = parsed[passwordCommand] { reference.password = .command(line) }
        if parsed[passwordFrom] == .keyring { reference.password = .keyring }
        reference.keyFile = parsed[keyFile].map(Self.absolute)
        let chosen = [parsed[challenge.yubikey] != nil, parsed[challenge.secret] != nil, parsed[challenge.command] != nil].filter { $0 }.count
        guard chosen <= 1 else {
            throw CommandLineError.usage(message: "--yubikey, --challenge-response-secret and --challenge-response-command exclude each other",
                                         command: name)
        }
        if let slot = parsed[challenge.yubikey] { reference.challengeResponse = .yubiKey(slot) }
        if let path = parsed[challenge.secret] { reference.challengeResponse = .secretFile(Self.absolute(path)) }
        if let line = parsed[challenge.command] { reference.challengeResponse = .command(line) }
        if let problem = reference.problem { throw CommandLineError.usage(message: "daemon add: \(problem)", command: name) }
        return reference
    }

    /// The configuration, refused for rewriting when a person's line in it cannot be used (it would be lost).
    private func configurationToEdit() throws -> DaemonConfiguration {
        let configuration = try DaemonConfiguration.load()
        guard configuration.problems.isEmpty else {
            throw CommandLineError.usage(message: "\(DaemonConfiguration.defaultPath) has lines that cannot be used (\(configuration.problems.map(\.description).joined(separator: "; "))); fix them first, they would be lost",
                                         command: name)
        }
        return configuration
    }

    private func add(_ argument: String, _ parsed: ParsedArguments, output: inout StandardStreams) throws -> ExitCode {
        let path = Self.absolute(argument)
        var vault = DaemonVault(path: path, credentials: try reference(parsed))
        vault.policy = parsed[policy] ?? vault.policy
        vault.copyPolicy = parsed[copyPolicy] ?? vault.copyPolicy
        vault.pollInterval = parsed[poll]
        vault.copyGrace = parsed[copyGrace] ?? vault.copyGrace
        vault.rebuildGrace = parsed[rebuildGrace] ?? vault.rebuildGrace
        vault.notices = (parsed[notify] ?? .on) == .on
        var configuration = try configurationToEdit()
        // They must open it (exit 3 otherwise, nothing added).
        _ = try vault.credentials.open(path, standIn: path, state: stateOptions.state(parsed), on: CommandFileSystem.current)
        // Configured already, perhaps under another spelling: that section is updated, never a second one added.
        let existing = configuration.vault(sameFileAs: path, on: CommandFileSystem.current)
        let replacing = existing != nil
        if let existing {
            vault.path = existing.path
            configuration.vaults = configuration.vaults.map { $0.path == existing.path ? vault : $0 }
        } else {
            configuration.vaults.append(vault)
        }
        try configuration.save()
        output.print("\(replacing ? "updated" : "added") \(vault.path.terminalSafe) in \(DaemonConfiguration.defaultPath.terminalSafe)"
                     + Self.tellRunningDaemon())
        return .success
    }

    private func remove(_ argument: String, state: SyncStateStore, output: inout StandardStreams) throws -> ExitCode {
        let path = Self.absolute(argument)
        var configuration = try configurationToEdit()
        guard let configured = configuration.vaults.first(where: { $0.path == argument })
            ?? configuration.vault(sameFileAs: path, on: CommandFileSystem.current) else {
            throw CommandLineError.usage(message: "\(argument.terminalSafe) is not a configured vault (see `mypass-sync daemon list`)", command: name)
        }
        configuration.vaults.removeAll { $0.path == configured.path }
        try configuration.save()
        // A pause belongs to the configured vault: the same vault added again later is watched.
        try? VaultPause(state: state, vaultPath: DurableFile.canonicalPath(configured.path, on: CommandFileSystem.current)).resume()
        output.print("removed \(path.terminalSafe)" + Self.tellRunningDaemon())
        return .success
    }

    /// Asks a running daemon to reread its configuration; what to add to the message.
    private static func tellRunningDaemon() -> String {
        guard let socket = try? ControlSocket.defaultPath(), let answer = try? ControlSocket.send(.reload, to: socket),
              answer.ok else { return "" }
        return " (the running daemon reread its configuration)"
    }

    private func list(json: Bool, output: inout StandardStreams) throws -> ExitCode {
        let configuration = try DaemonConfiguration.load()
        for problem in configuration.problems { output.printError("warning: \(DaemonConfiguration.defaultPath.terminalSafe): \(problem.description.terminalSafe) (skipped)") }
        if json {
            output.print(try JSONText.encode(DaemonListing(configuration)))
        } else if configuration.vaults.isEmpty {
            output.print("no vaults configured (add one with `mypass-sync daemon add`)")
        } else {
            for vault in configuration.vaults {
                output.print("\(vault.path.terminalSafe)  credentials: \(vault.credentials.kind.rawValue), policy: \(vault.policy.rawValue), "
                             + "conflict copies: \(vault.copyPolicy.rawValue), notices: \(vault.notices ? "on" : "off")")
            }
        }
        return .success
    }

    private func status(json: Bool, output: inout StandardStreams) throws -> ExitCode {
        let answer = try ControlSocket.send(.status, to: try ControlSocket.defaultPath())
        guard answer.ok, let status = answer.status else {
            output.printError("error: \((answer.error ?? "no status").terminalSafe)")
            return .usage
        }
        if json {
            output.print(try JSONText.encode(status))
            return .success
        }
        let formatter = ISO8601DateFormatter()
        let rows = [["VAULT", "STATE", "LAST EVENT", "COPIES", "LAST MERGE", "CREDENTIALS"]] + status.vaults.map { vault in
            [vault.path.terminalSafe, vault.state.rawValue, vault.lastEvent.map { "\($0.kind) \(formatter.string(from: $0.time))" } ?? "-",
             String(vault.conflictCopies), vault.lastMerge.map { "\($0.journal) \(formatter.string(from: $0.time))" } ?? "-",
             vault.credentials.rawValue]
        }
        let widths = (0..<6).map { column in rows.map { $0[column].count }.max() ?? 0 }
        for row in rows { output.print(zip(row, widths).map { $0.padding(toLength: $1) }.joined(separator: "  ").trimmingCharacters(in: .whitespaces)) }
        for vault in status.vaults { if let detail = vault.detail { output.print("\(vault.path.terminalSafe): \(detail.terminalSafe)") } }
        for vault in status.vaults {
            for share in vault.shares {
                let times = "last import \(share.lastImport.map(formatter.string(from:)) ?? "never"), last export \(share.lastExport.map(formatter.string(from:)) ?? "never")"
                output.print("\(vault.path.terminalSafe): shared group \(share.group.terminalSafe) \(share.type ?? "unreadable") "
                             + "\((share.container ?? "?").terminalSafe)\(share.approved ? "" : " (not approved on this device)"); \(times)"
                             + (share.problem.map { "; \($0.terminalSafe)" } ?? ""))
            }
        }
        return .success
    }

    private func request(_ request: ControlRequest, output: inout StandardStreams) throws -> ExitCode {
        let answer = try ControlSocket.send(request, to: try ControlSocket.defaultPath())
        guard answer.ok else {
            output.printError("error: \((answer.error ?? "refused").terminalSafe)")
            return .usage
        }
        output.print("\(request.vault?.terminalSafe ?? ""): \((answer.done ?? "done").terminalSafe)")
        return .success
    }
}

/// `daemon list --json`: the configured vaults, no secret.
private struct DaemonListing: Encodable {
    let schema = 1
    let vaults: [Vault]
    let problems: [String]

    struct Vault: Encodable {
        let path: String
        let credentials: CredentialReference.Kind
        let policy: String
        let conflictCopies: String
        let poll: Double?
        let copyGrace: Double
        let rebuildGrace: Double
        let notify: Bool
    }

    init(_ configuration: DaemonConfiguration) {
        vaults = configuration.vaults.map {
            Vault(path: $0.path, credentials: $0.credentials.kind, policy: $0.policy.rawValue, conflictCopies: $0.copyPolicy.rawValue,
                  poll: $0.pollInterval, copyGrace: $0.copyGrace, rebuildGrace: $0.rebuildGrace, notify: $0.notices)
        }
        problems = configuration.problems.map(\.description)
    }
}

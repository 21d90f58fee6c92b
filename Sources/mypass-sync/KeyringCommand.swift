internal import Foundation
internal import MyPassCrypto
internal import MyPassSync

/// `mypass-sync keyring store|forget|list`: vault passwords in the desktop keyring (Secret Service),
/// for `--password-from keyring` on every command that takes credentials.
struct KeyringCommand: Command {
    let name = "keyring"
    let summary = "Keep a vault's password in the desktop keyring (store, forget, list) for --password-from keyring."
    let usage = "mypass-sync keyring store <vault> [--key-file F] [--password-stdin | --password-command CMD] [--replace]\n"
        + "       mypass-sync keyring forget <vault>\n       mypass-sync keyring list [--json]"
    let arguments = "  store|forget|list       What to do.\n  <vault>                 The .kdbx file."
    let notes = """
        store checks that the password opens the vault, then keeps it in the keyring's default collection (GNOME
        Keyring, KWallet, KeePassXC's Secret Service), labelled `mypass-sync: NAME (database NAME)`, with the
        database's identity (its root group's UUID and creation time), the vault's path and the key file's path
        (never the key file's bytes); storing another version or name of the same database replaces its item.
        --password-from keyring then finds the password for any name the database turns up as: the vault, its
        conflict copies, git's and Unison's temporary files (items stored for the same path first, at most
        \(DesktopKeyring.maximumCandidates) tried, each costing one key derivation; --verbose says which matched).
        A locked collection is unlocked through the keyring's own prompt where it has one. Without a session bus or
        Secret Service, or without a stored password, the command fails with exit 3.
        """
    let passwordStdin = Flag("--password-stdin", help: "Read the password from the first line of standard input.")
    let passwordCommand = Option<String>("--password-command", valueName: "cmd", help: "Run CMD with /bin/sh -c; its first line is the password.")
    let keyFile = Option<String>("--key-file", "-k", valueName: "file", help: "The vault's key file (its path is stored, not its bytes).")
    let json = Flag("--json", help: "list: one JSON document (schema 1).")
    let replace = Flag("--replace", help: "store: replace the item of another file that carries this database's identity.")
    let challenge = ChallengeResponseOptions()

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        let parsed = try parse(arguments, count: 1...2)
        let action = parsed.positionals[0]
        func needsVault() throws -> String {
            guard parsed.positionals.count == 2 else { throw CommandLineError.usage(message: "keyring \(action) needs a vault", command: name) }
            return parsed.positionals[1]
        }
        switch action {
        case "store":
            let path = try needsVault()
            let file = try VaultFile.read(path, on: CommandFileSystem.current)
            let password: SecureBytes
            if let line = parsed[passwordCommand] {
                password = try PasswordCommand(line).password()
            } else if parsed[passwordStdin] {
                guard let line = PasswordInput.readStandardInputLine() else {
                    throw CommandLineError.usage(message: "--password-stdin: standard input is empty", command: name)
                }
                password = line
            } else {
                guard let typed = PasswordInput.prompt("Password for \((path as NSString).lastPathComponent): ") else {
                    throw CommandLineError.usage(message: "no terminal to ask for the password: use --password-stdin or --password-command",
                                                 command: name)
                }
                password = typed
            }
            let keyFileBytes = try parsed[keyFile].map { try FileReading.readAll(atPath: $0, on: CommandFileSystem.current) }
            let plain = try VaultCredentials(password: password, keyFile: keyFileBytes)
            // A challenge-response component is checked here, not stored: it is given again at each use.
            let unlocked = try file.unlock(try challenge.component(parsed).map(plain.adding) ?? plain)
            try DesktopKeyring.store(password, for: unlocked, keyFilePath: parsed[keyFile], replacing: parsed[replace])
            output.print("stored the password of \(path.terminalSafe) in the desktop keyring (database \(DatabaseIdentity(unlocked.vault)))")
        case "forget":
            let path = try needsVault()
            // Items stored for this path, and, when the keyring opens the file, those for its database.
            let identity = (try? VaultFile.read(path, on: CommandFileSystem.current)).flatMap { try? DesktopKeyring.unlock($0, keyFile: nil) }.map { DatabaseIdentity($0.vault.vault) }
            let removed = try DesktopKeyring.forget(path: path, identity: identity)
            output.print(removed == 0 ? "no keyring item for \(path.terminalSafe)" : "removed \(removed) keyring item(s) for \(path.terminalSafe)")
        case "list":
            let entries = try DesktopKeyring.list()
            if parsed[json] {
                output.print(try JSONText.encode(KeyringListing(items: entries)))
            } else if entries.isEmpty {
                output.print("no vault passwords in the desktop keyring")
            } else {
                for entry in entries {
                    output.print(entry.label.terminalSafe)
                    output.print("  path: \((entry.path ?? "?").terminalSafe)" + (entry.keyFile.map { ", key file: \($0.terminalSafe)" } ?? ""))
                    output.print("  database: \(entry.identity ?? "?")")
                }
            }
        default:
            throw CommandLineError.usage(message: "keyring takes store, forget or list, not \(action.terminalSafe)", command: name)
        }
        return .success
    }
}

/// `keyring list --json`.
private struct KeyringListing: Encodable {
    let schema = 1
    let items: [DesktopKeyring.Entry]
}

internal import Foundation
internal import MyPassCore
internal import MyPassCrypto
internal import MyPassSync

/// Where a password may come from besides standard input and the prompt.
enum PasswordStore: String, CaseIterable, Sendable {
    /// The desktop keyring (Secret Service), by the file's database identity.
    case keyring
}

/// The credential options of every command that opens a vault, and how they become credentials:
/// standard input, a prompt on the terminal, a password command, the desktop keyring, a key file.
struct CredentialOptions: OptionGroup {
    let passwordStdin = Flag("--password-stdin", help: "Read the password from the first line of standard input (an empty line is an empty password).")
    let passwordCommand = Option<String>("--password-command", valueName: "cmd",
                                         help: "Run CMD with /bin/sh -c; the first line it prints is the password (secret-tool lookup …, pass show …).")
    let passwordFrom = Option<PasswordStore>("--password-from", help: "keyring: the password stored with `keyring store` for this file's database.")
    let verbose = Flag("--verbose", help: "Say where the credentials came from (which keyring item, by which rule).")
    let challenge = ChallengeResponseOptions()
    let keyFile = Option<String>("--key-file", "-k", valueName: "file", help: "Key file (XML 1.0/2.0, 32-byte binary, 64-hex or any file).")
    let noPassword = Flag("--no-password", help: "The vault has no password (key file only).")
    let maxKDFMemory = Option<UInt64>.number(
        "--max-kdf-memory", valueName: "bytes", help: "Raise the Argon2 memory cap (default 2 GiB) for vaults set higher.", in: 1...UInt64.max)
    let quiet = Flag("--quiet", help: "No progress line on standard error (there is none unless it is a terminal).")

    /// The progress line of this command (silent with --quiet or when standard error is not a terminal).
    func progress(_ parsed: ParsedArguments) -> ProgressLine {
        ProgressLine(quiet: parsed[quiet])
    }

    /// Reads the vault at `path` once and checks it (not a vault, or a KDF beyond the caps, is said
    /// before any password is asked for).
    func read(_ parsed: ParsedArguments, path: String) throws -> VaultFile {
        try VaultFile.read(path, on: CommandFileSystem.current, maximumKDFMemory: parsed[maxKDFMemory])
    }

    /// The caps for a vault the user opens: the defaults, with `--max-kdf-memory` when given.
    func limits(_ parsed: ParsedArguments) -> VaultLimits {
        VaultFile.userLimits(maximumKDFMemory: parsed[maxKDFMemory])
    }

    /// The credentials for a watched vault, checked on `standIn` (the vault, or the copy standing in
    /// for it while it is missing) read under the library's rule for that check: held to the budget
    /// for versions from elsewhere where it applies, before any password is asked for, and no more
    /// keyring candidates derived than fit it.
    func credentials(_ parsed: ParsedArguments, forWatching vault: String, standIn: String, state: SyncStateStore, command: String)
        throws -> VaultCredentials {
        let checked = try VaultFile.readForCredentialCheck(vault: vault, standIn: standIn, state: state, limits: limits(parsed),
                                                           on: CommandFileSystem.current)
        if parsed[passwordFrom] == .keyring {
            try checkSources(parsed, command: command)
            return try keyringUnlock(parsed, file: checked.file, candidates: checked.derivations(atMost: DesktopKeyring.maximumCandidates))
                .credentials
        }
        return try typedCredentials(parsed, for: checked.file.path, command: command)
    }

    /// A version of a vault that did not come from this device (a git blob) opened with the
    /// credentials, within the budget for versions with nothing to measure against: its KDF checked
    /// before any password is asked for, and no more keyring candidates derived than fit it.
    func unlockForeign(_ parsed: ParsedArguments, path: String, command: String) throws -> UnlockedVault {
        let budget = ForeignVersionBudget.withoutReference(within: limits(parsed))
        let file = try VaultFile.read(path, on: CommandFileSystem.current, within: budget)
        if parsed[passwordFrom] == .keyring {
            try checkSources(parsed, command: command)
            return try keyringUnlock(parsed, file: file, candidates: file.derivations(within: budget, atMost: DesktopKeyring.maximumCandidates)).vault
        }
        return try file.unlock(try typedCredentials(parsed, for: path, command: command))
    }

    /// Whether credentials were given on the command line (else a kept quick-unlock key may be used).
    func given(_ parsed: ParsedArguments) -> Bool {
        parsed[passwordStdin] || parsed[noPassword] || parsed[keyFile] != nil || parsed[passwordCommand] != nil || parsed[passwordFrom] != nil
            || challenge.given(parsed)
    }

    /// The credentials for `path`: standard input, a password command, the desktop keyring, or a
    /// prompt on the terminal; plus the key file.
    func credentials(_ parsed: ParsedArguments, for path: String, command: String) throws -> VaultCredentials {
        if parsed[passwordFrom] == .keyring {
            try checkSources(parsed, command: command)
            return try keyringUnlock(parsed, file: read(parsed, path: path)).credentials
        }
        return try typedCredentials(parsed, for: path, command: command)
    }

    /// The credential options given, as arguments for a command line that git or another program
    /// runs later (paths made absolute); standard input cannot be one of them, and no password is.
    func commandLine(_ parsed: ParsedArguments, command: String) throws -> [String] {
        guard !parsed[passwordStdin] else {
            throw CommandLineError.usage(message: "--password-stdin cannot be kept for later runs: use --password-from keyring or "
                                         + "--password-command", command: command)
        }
        func absolute(_ path: String) -> String { URL(fileURLWithPath: path).standardizedFileURL.path }
        var words: [String] = []
        if parsed[noPassword] { words.append("--no-password") }
        if let store = parsed[passwordFrom] { words += ["--password-from", store.rawValue] }
        if let line = parsed[passwordCommand] { words += ["--password-command", line] }
        if let path = parsed[keyFile] { words += ["--key-file", absolute(path)] }
        if let memory = parsed[maxKDFMemory] { words += ["--max-kdf-memory", String(memory)] }
        if let slot = parsed[challenge.yubikey] { words += ["--yubikey", slot] }
        if let path = parsed[challenge.secret] { words += ["--challenge-response-secret", absolute(path)] }
        if let line = parsed[challenge.command] { words += ["--challenge-response-command", line] }
        return words
    }

    /// At most one password source.
    private func checkSources(_ parsed: ParsedArguments, command: String) throws {
        let sources = [parsed[noPassword] ? "--no-password" : nil, parsed[passwordStdin] ? "--password-stdin" : nil,
                       parsed[passwordCommand] != nil ? "--password-command" : nil, parsed[passwordFrom] != nil ? "--password-from" : nil]
            .compactMap { $0 }
        guard sources.count <= 1 else {
            throw CommandLineError.usage(message: sources.joined(separator: " and ") + " exclude each other", command: command)
        }
    }

    /// The file opened with the keyring's password for its database (said with --verbose).
    private func keyringUnlock(
        _ parsed: ParsedArguments, file: VaultFile, candidates: Int = DesktopKeyring.maximumCandidates
    ) throws -> (vault: UnlockedVault, credentials: VaultCredentials) {
        let keyFileBytes = try parsed[keyFile].map { try FileReading.readAll(atPath: $0, on: CommandFileSystem.current) }
        let found = try DesktopKeyring.unlock(file, keyFile: keyFileBytes, challengeResponse: challenge.component(parsed), candidates: candidates)
        if parsed[verbose] {
            var streams = StandardStreams()
            streams.printError("credentials for \(file.path.terminalSafe): \(found.match.description.terminalSafe)")
        }
        return (found.vault, found.credentials)
    }

    /// The credentials from standard input, a password command or the prompt, and the key file.
    private func typedCredentials(_ parsed: ParsedArguments, for path: String, command: String) throws -> VaultCredentials {
        func usage(_ message: String) -> CommandLineError { .usage(message: message, command: command) }
        try checkSources(parsed, command: command)
        let password: SecureBytes?
        if parsed[noPassword] {
            password = nil
        } else if let line = parsed[passwordCommand] {
            password = try PasswordCommand(line).password()
        } else if parsed[passwordStdin] {
            guard let line = PasswordInput.readStandardInputLine() else { throw usage("--password-stdin: standard input is empty") }
            password = line
        } else {
            guard let typed = PasswordInput.prompt("Password for \((path as NSString).lastPathComponent): ") else {
                throw usage("no terminal to ask for the password: use --password-stdin, --password-command, --password-from keyring or --no-password")
            }
            password = typed
        }
        let keyFileBytes = try parsed[keyFile].map { try FileReading.readAll(atPath: $0, on: CommandFileSystem.current) }
        if password == nil && keyFileBytes == nil { throw usage("--no-password needs --key-file") }
        let credentials = try VaultCredentials(password: password, keyFile: keyFileBytes)
        return try challenge.component(parsed).map(credentials.adding) ?? credentials
    }

    /// The vault at `path` read, checked, then opened with the credentials.
    func unlock(_ parsed: ParsedArguments, path: String, command: String) throws -> UnlockedVault {
        let file = try read(parsed, path: path)
        if parsed[passwordFrom] == .keyring {
            try checkSources(parsed, command: command)
            return try keyringUnlock(parsed, file: file).vault
        }
        let given = try typedCredentials(parsed, for: path, command: command)
        let line = progress(parsed)
        line.show("opening \((path as NSString).lastPathComponent): deriving the key, decrypting, parsing…")
        defer { line.clear() }
        return try file.unlock(given)
    }

    /// The vault at `path` opened only to be read: with the key `unlock` left in the kernel keyring
    /// when it fits this version and no credentials are given (no password asked, no KDF run), else
    /// with the credentials — which then refresh a kept key that no longer fits. The version read
    /// becomes this device's base in `state`.
    func unlockForReading(_ parsed: ParsedArguments, path: String, state: SyncStateStore?, command: String) throws -> UnlockedVault {
        let file = try read(parsed, path: path)
        let unlocked: UnlockedVault
        if !given(parsed), let quick = try file.unlockQuickly() {
            unlocked = quick
        } else if parsed[passwordFrom] == .keyring {
            try checkSources(parsed, command: command)
            unlocked = try keyringUnlock(parsed, file: file).vault
            unlocked.refreshQuickUnlock()
        } else {
            let credentials = try credentials(parsed, for: path, command: command)
            let line = progress(parsed)
            line.show("opening \((path as NSString).lastPathComponent): deriving the key, decrypting, parsing…")
            defer { line.clear() }
            unlocked = try file.unlock(credentials)
            unlocked.refreshQuickUnlock()
        }
        if let state { unlocked.recordAsBase(in: state) }
        return unlocked
    }
}

/// A challenge-response key component: a YubiKey, its secret in a file, or a program that answers.
struct ChallengeResponseOptions: OptionGroup {
    let yubikey = Option<String>("--yubikey", valueName: "slot[:serial]", help: "A YubiKey's HMAC-SHA1 challenge-response slot (1 or 2), as KeePassXC uses it.")
    let secret = Option<String>("--challenge-response-secret", valueName: "file",
                                help: "A file holding the key's HMAC-SHA1 secret in hex (a software key, as Strongbox's virtual hardware key).")
    let command = Option<String>("--challenge-response-command", valueName: "cmd",
                                 help: "Run CMD with /bin/sh -c: the challenge in hex on its input, the 20-byte response in hex on its output.")

    func given(_ parsed: ParsedArguments) -> Bool {
        parsed[yubikey] != nil || parsed[secret] != nil || parsed[command] != nil
    }

    /// The component the options name (nil: none); at most one.
    func component(_ parsed: ParsedArguments) throws -> (any ChallengeResponseComponent)? {
        let chosen = [parsed[yubikey] != nil, parsed[secret] != nil, parsed[command] != nil].filter { $0 }.count
        guard chosen <= 1 else {
            throw CommandLineError.usage(message: "--yubikey, --challenge-response-secret and --challenge-response-command exclude each other",
                                         command: "credentials")
        }
        if let slot = parsed[yubikey] { return try YubiKeyChallengeResponse(parsing: slot) }
        if let path = parsed[secret] {
            return try ChallengeResponseSecret(file: path)
        }
        return parsed[command].map { ChallengeResponseCommand($0) }
    }
}

/// The credentials of the other vaults of a command (`merge`, `diff`) when they differ.
struct OtherCredentialOptions: OptionGroup {
    let remotePasswordStdin = Flag("--remote-password-stdin", help: "The other vaults' password is the second line of standard input.")
    let remoteKeyFile = Option<String>("--remote-key-file", valueName: "file", help: "The other vaults' key file.")

    /// The other vaults' credentials; nil: the first vault's.
    func credentials(_ parsed: ParsedArguments, for path: String, command: String) throws -> VaultCredentials? {
        guard parsed[remotePasswordStdin] || parsed[remoteKeyFile] != nil else { return nil }
        let password: SecureBytes?
        if parsed[remotePasswordStdin] {
            guard let line = PasswordInput.readStandardInputLine() else {
                throw CommandLineError.usage(message: "--remote-password-stdin: no second line on standard input", command: command)
            }
            password = line
        } else {
            password = PasswordInput.prompt("Password for \((path as NSString).lastPathComponent): ")
        }
        let keyFile = try parsed[remoteKeyFile].map { try FileReading.readAll(atPath: $0, on: CommandFileSystem.current) }
        return try VaultCredentials(password: password, keyFile: keyFile)
    }
}

/// Where this device keeps its sync state.
struct StateOptions: OptionGroup {
    let stateDirectory = Option<String>("--state-dir", valueName: "dir", help: "Where this device keeps its sync state (default $XDG_STATE_HOME/mypass-sync).")

    /// The state directory given (else the default), refused when it is not private (`checkPrivate`).
    func state(_ parsed: ParsedArguments) throws -> SyncStateStore {
        let state = SyncStateStore(directory: parsed[stateDirectory], on: CommandFileSystem.current)
        try state.checkPrivate()
        return state
    }
}

/// `--backup`: keep the version a save replaces.
struct BackupOptions: OptionGroup {
    let backup = Flag("--backup", help: "Keep the replaced version as <vault>.bak (0600); {\"backups\": true} in ~/.config/mypass-sync/config.json always does.")
}

/// The options of a command that edits one vault, and how it opens and saves it.
struct EditingOptions: OptionGroup {
    let credentials = CredentialOptions()
    let stateOptions = StateOptions()
    let backupOptions = BackupOptions()

    /// An editing session on the vault at `path`, its version recorded as the base.
    func session(_ parsed: ParsedArguments, path: String, command: String) throws -> SyncSession {
        let unlocked = try credentials.unlock(parsed, path: path, command: command)
        return try unlocked.session(state: stateOptions.state(parsed), keepsBackup: parsed[backupOptions.backup], settings: DeviceSettings.load())
    }

    /// Saves an edit; a change another program made meanwhile is merged in, not written over.
    /// Returns whether the file was written (an edit that changes nothing leaves it as it was).
    @discardableResult
    func save(_ session: SyncSession, output: inout StandardStreams) throws -> Bool {
        let save = try session.saveMerging()
        if !save.mergedFromDisk.isEmpty {
            output.printError("note: the vault changed on disk meanwhile; merged \(save.mergedFromDisk.count) change(s) from it")
        }
        for warning in session.warnings { output.printError("warning: \(warning)") }
        return save.wroteFile
    }
}

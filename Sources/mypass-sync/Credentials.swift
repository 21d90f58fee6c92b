internal import Foundation
internal import KDBXFormat
internal import MyPassCore
internal import MyPassCrypto
internal import MyPassSync

/// The credential options every command that opens a vault accepts, and how they become a key.
enum Credentials {
    static let options: [OptionSpec] = [
        .flag("--password-stdin", help: "Read the password from the first line of standard input (an empty line is an empty password)."),
        .value("--key-file", "-k", valueName: "file", help: "Key file (XML 1.0/2.0, 32-byte binary, 64-hex or any file)."),
        .flag("--no-password", help: "The vault has no password (key file only)."),
        .value("--max-kdf-memory", valueName: "bytes", help: "Raise the Argon2 memory cap (default 2 GiB) for vaults set higher."),
    ]

    /// Extra options of commands that open several vaults.
    static let remoteOptions: [OptionSpec] = [
        .flag("--remote-password-stdin", help: "The other vaults' password is the second line of standard input."),
        .value("--remote-key-file", valueName: "file", help: "The other vaults' key file."),
    ]

    /// The key for the other vaults: the first vault's unless `--remote-*` options say otherwise.
    static func remoteKey(_ arguments: ParsedArguments, localKey: CompositeKey, vaultPath: String, command: String) throws -> CompositeKey {
        guard arguments.flag("remote-password-stdin") || arguments.value("remote-key-file") != nil else { return localKey }
        let password: SecureBytes?
        if arguments.flag("remote-password-stdin") {
            guard let line = PasswordInput.readStandardInputLine() else {
                throw CommandLineError.usage(message: "--remote-password-stdin: no second line on standard input", command: command)
            }
            password = line
        } else {
            password = PasswordInput.prompt("Password for \((vaultPath as NSString).lastPathComponent): ")
        }
        let keyFile = try arguments.value("remote-key-file").map { path in try FileReading.readAll(atPath: path) }
        return try CompositeKey(password: password, keyFileContents: keyFile)
    }

    /// The composite key for `vaultPath` from the parsed options: stdin, or a prompt on the terminal.
    static func compositeKey(_ arguments: ParsedArguments, vaultPath: String, command: String) throws -> CompositeKey {
        let password: SecureBytes?
        if arguments.flag("no-password") {
            guard !arguments.flag("password-stdin") else {
                throw CommandLineError.usage(message: "--no-password and --password-stdin exclude each other", command: command)
            }
            password = nil
        } else if arguments.flag("password-stdin") {
            guard let line = PasswordInput.readStandardInputLine() else {
                throw CommandLineError.usage(message: "--password-stdin: standard input is empty", command: command)
            }
            password = line
        } else {
            guard let typed = PasswordInput.prompt("Password for \((vaultPath as NSString).lastPathComponent): ") else {
                throw CommandLineError.usage(
                    message: "no terminal to ask for the password: use --password-stdin or --no-password", command: command)
            }
            password = typed
        }
        let keyFile = try arguments.value("key-file").map { path in try FileReading.readAll(atPath: path) }
        if password == nil && keyFile == nil {
            throw CommandLineError.usage(message: "--no-password needs --key-file", command: command)
        }
        return try CompositeKey(password: password, keyFileContents: keyFile)
    }

    /// The resource limits, raised by `--max-kdf-memory`.
    static func limits(_ arguments: ParsedArguments, command: String) throws -> ResourceLimits {
        var limits = ResourceLimits.standard
        if let text = arguments.value("max-kdf-memory") {
            guard let bytes = UInt64(text), bytes > 0 else {
                throw CommandLineError.usage(message: "--max-kdf-memory takes a number of bytes", command: command)
            }
            limits.maximumArgon2MemoryBytes = bytes
        }
        return limits
    }

    /// A vault opened with the options' credentials, and the key and limits used.
    struct Unlocked {
        let opened: OpenedVault
        let key: CompositeKey
        let limits: ResourceLimits
        /// The version of the file that was read, and its bytes.
        let fingerprint: Fingerprint
        let bytes: Data
    }

    /// Reads, decrypts and parses the vault at `path` with the options' credentials.
    static func openVault(_ arguments: ParsedArguments, path: String, command: String) throws -> Unlocked {
        try openVault(arguments, path: path, read: DurableFile.read(atPath: path), command: command)
    }

    /// `openVault` for the file's bytes and fingerprint, already read from `path`.
    private static func openVault(
        _ arguments: ParsedArguments, path: String, read: (bytes: Data, fingerprint: Fingerprint), command: String
    ) throws -> Unlocked {
        let (bytes, fingerprint) = read
        let header = try KDBXReader.header(of: bytes)  // Not a vault: say so before asking for a password.
        let limits = try limits(arguments, command: command)
        try header.kdf.check(against: limits)
        let key = try compositeKey(arguments, vaultPath: path, command: command)
        let opened = try KDBXReader.open(bytes, key: key, limits: limits)
        ProcessLifetime.keepUntilExit(opened)  // never freed entry by entry: the process ends soon
        return Unlocked(opened: opened, key: key, limits: limits, fingerprint: fingerprint, bytes: bytes)
    }

    /// Whether the options name credentials (then they are used, never a quick-unlock key).
    static func areGiven(_ arguments: ParsedArguments) -> Bool {
        arguments.flag("password-stdin") || arguments.flag("no-password") || arguments.value("key-file") != nil
    }

    /// The vault at `path` opened only to be read: with the key `unlock` left in the kernel keyring
    /// when it fits this version and no credentials are given (no password asked, no KDF run), else
    /// with the options' credentials — which then refresh a kept key that no longer fits. The version
    /// read becomes this device's base (`state`).
    static func openForReading(_ arguments: ParsedArguments, path: String, state: SyncStateStore?, command: String) throws -> OpenedVault {
        let read = try DurableFile.read(atPath: path)
        if !areGiven(arguments), let opened = try QuickUnlock().open(read.bytes, path: path, limits: limits(arguments, command: command)) {
            ProcessLifetime.keepUntilExit(opened)
            try? state?.recordIfNew(read.bytes, fingerprint: read.fingerprint, for: path)
            return opened
        }
        let unlocked = try openVault(arguments, path: path, read: read, command: command)
        try? state?.recordIfNew(unlocked.bytes, fingerprint: unlocked.fingerprint, for: path)
        QuickUnlock().refresh(path: path, with: unlocked.opened.derivedKey)
        return unlocked.opened
    }

    /// The local vault and other copies of it (`merge`), opened in parallel, one per core, after one
    /// KDF run: the local file's; other files reuse it where their KDF salt and credentials match.
    /// The others' results are returned as they are, for the caller to explain a failure.
    static func openWithOthers(
        _ arguments: ParsedArguments, path: String, others: [String], command: String
    ) throws -> (local: Unlocked, otherKey: CompositeKey, others: [Result<OpenedVault, KDBXError>]) {
        let (bytes, fingerprint) = try DurableFile.read(atPath: path)
        let header = try KDBXReader.header(of: bytes)  // Not a vault: say so before asking for a password.
        let limits = try limits(arguments, command: command)
        try header.kdf.check(against: limits)
        let key = try compositeKey(arguments, vaultPath: path, command: command)
        let otherKey = try remoteKey(arguments, localKey: key, vaultPath: others[0], command: command)
        let otherFiles = try others.map { try FileReading.readAll(atPath: $0) }
        let derived = try KDBXReader.deriveKey(for: bytes, key: key, limits: limits)
        let opened = KDBXReader.open(files: [(bytes, key)] + otherFiles.map { ($0, otherKey) }, cachedKey: derived, limits: limits)
        ProcessLifetime.keepUntilExit(opened)
        let local = Unlocked(opened: try opened[0].get(), key: key, limits: limits, fingerprint: fingerprint, bytes: bytes)
        return (local, otherKey, Array(opened.dropFirst()))
    }

    /// Opens another vault of the same command with `key`, reusing `cachedKey` when the KDF matches.
    static func openOther(path: String, key: CompositeKey, cachedKey: DerivedKey?, limits: ResourceLimits) throws -> OpenedVault {
        try KDBXReader.open(FileReading.readAll(atPath: path), key: key, cachedKey: cachedKey, limits: limits)
    }
}

internal import Foundation
internal import MyPassCrypto
internal import MyPassSync

/// `mypass-sync db-create VAULT [--decryption-time MS | KDF options] [--set-key-file FILE]`.
struct CreateCommand: Command {
    let name = "db-create"
    let summary = "Create a new vault (KDBX 4, Argon2d calibrated to the decryption time, a recycle bin)."
    let usage = "mypass-sync db-create <vault> [--decryption-time MS | --kdf ... KDF options] [--set-key-file FILE] [--password-stdin | --no-password] [--name NAME]"
    let notes = """
        The password is asked twice on a terminal (or read once with --password-stdin). A key file
        that does not exist is created (32 random bytes as 64 hexadecimal digits, 0600). An existing
        file at <vault> is never replaced.
        """
    let decryptionTime = Option<Int>.number("--decryption-time", "-t", valueName: "ms", help: "How long opening should take here (default 1000, as KeePassXC).", in: 100...60_000)
    let kdf = Option<FormatChange.KDF>("--kdf", help: "Key derivation instead of the calibrated Argon2d.")
    let iterations = Option<UInt64>.number("--kdf-iterations", valueName: "n", help: "Argon2 iterations.", in: 1...UInt64.max)
    let memory = Option<UInt64>.number("--kdf-memory", valueName: "bytes", help: "Argon2 memory in bytes (a multiple of 1024).", in: 1...UInt64.max)
    let parallelism = Option<UInt32>.number("--kdf-parallelism", valueName: "n", help: "Argon2 lanes.", in: 1...UInt32.max)
    let rounds = Option<UInt64>.number("--kdf-rounds", valueName: "n", help: "AES-KDF rounds.", in: 1...UInt64.max)
    let keyFile = Option<String>("--set-key-file", valueName: "file", help: "Protect the vault with this key file too (created when missing).")
    let passwordStdin = Flag("--password-stdin", help: "Read the password from the first line of standard input.")
    let noPassword = Flag("--no-password", help: "No password (needs --set-key-file).")
    let challenge = ChallengeResponseOptions()
    let vaultName = Option<String>("--name", valueName: "name", help: "The vault's name (default: the file's name).")

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        let parsed = try parse(arguments, count: 1...1)
        func usage(_ message: String) -> CommandLineError { .usage(message: message, command: name) }
        let path = parsed.positionals[0]
        guard !FileManager.default.fileExists(atPath: path) else { throw usage("\(path) exists already; nothing was written") }
        var change = FormatChange()
        change.kdf = parsed[kdf]
        change.argon2Iterations = parsed[iterations]
        change.argon2Memory = parsed[memory]
        change.argon2Parallelism = parsed[parallelism]
        change.aesRounds = parsed[rounds]
        do { try change.validate() } catch { throw usage("\(error)") }
        if parsed[decryptionTime] != nil && (change.kdf != nil || change.argon2Iterations != nil || change.aesRounds != nil) {
            throw usage("--decryption-time calibrates the default KDF; it does not go with explicit KDF options")
        }
        let password: SecureBytes?
        if parsed[noPassword] {
            guard parsed[keyFile] != nil, !parsed[passwordStdin] else { throw usage("--no-password needs --set-key-file and no --password-stdin") }
            password = nil
        } else if parsed[passwordStdin] {
            guard let line = PasswordInput.readStandardInputLine() else { throw usage("--password-stdin: standard input is empty") }
            password = line
        } else {
            guard let first = PasswordInput.prompt("Password for the new vault: "), let second = PasswordInput.prompt("Repeat the password: ") else {
                throw usage("no terminal to ask for the password: use --password-stdin or --no-password")
            }
            guard first == second else { throw usage("the passwords differ; nothing was written") }
            password = first
        }
        var keyFileBytes: Data?
        if let keyPath = parsed[keyFile] {
            if FileManager.default.fileExists(atPath: keyPath) {
                keyFileBytes = try FileReading.readAll(atPath: keyPath, on: CommandFileSystem.current)
            } else {
                let key = Data(try RandomBytes.data(count: 32).map { String(format: "%02x", $0) }.joined().utf8)
                try AtomicFileWriter.write(key, toPath: keyPath, on: CommandFileSystem.current)
                keyFileBytes = key
                output.printError("created key file \(keyPath.terminalSafe): keep a copy; without it the vault does not open")
            }
        }
        let plain = try VaultCredentials(password: password, keyFile: keyFileBytes)
        let credentials = try challenge.component(parsed).map(plain.adding) ?? plain
        let seconds = Double(parsed[decryptionTime] ?? Int(VaultCreation.defaultDecryptionTime * 1000)) / 1000
        let format = try VaultCreation.create(
            at: path, on: CommandFileSystem.current, name: parsed[vaultName] ?? ((path as NSString).lastPathComponent as NSString).deletingPathExtension,
            credentials: credentials, decryptionTime: seconds, change: change)
        output.print("created \(path.terminalSafe): " + format.oneLine)
        return .success
    }
}

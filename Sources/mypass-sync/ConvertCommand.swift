internal import MyPassSync

/// `mypass-sync convert VAULT -o OUT [...]`: the same vault saved with another version, cipher or KDF.
struct ConvertCommand: Command {
    let name = "convert"
    let summary = "Save a vault as another KDBX version, cipher or KDF, with the same credentials."
    let usage = "mypass-sync convert <vault> -o <out> [--version 3.1|4.0|4.1] [--cipher aes256|chacha20|twofish] [--kdf argon2d|argon2id|aes-kdf] [KDF options] [credentials]"
    let arguments = "  <vault>                 The .kdbx file to convert (not modified)."
    let notes = """
        A new KDF or KDF setting gets a fresh random salt. The output is verified by opening it again
        with the same credentials before it replaces anything. Content that the requested --version
        cannot store (KDBX 4.1's PreviousParentGroup, group tags, QualityCheck, custom-data and icon
        times; KDBX 4's header plugin data) is refused (exit 6, naming it) unless --drop-unsupported;
        without --version the input's version is kept. KDBX 3.1 keeps no per-attachment protection
        flag (attachments stay encrypted with the file, written unflagged as KeePassXC writes them, so
        that every reader reads them); a conversion that clears flags says how many.
        """
    let outputPath = Option<String>("--output", "-o", valueName: "out", help: "Where to write the converted vault (replaced atomically).")
    let version = Option<FormatChange.Version>("--version", help: "Container version (default: the input's; 4.1 content keeps 4.1).")
    let cipher = Option<FormatChange.Cipher>("--cipher", help: "Payload cipher (default: the input's).")
    let kdf = Option<FormatChange.KDF>("--kdf", help: "Key derivation (default: the input's).")
    let iterations = Option<UInt64>.number("--kdf-iterations", valueName: "n", help: "Argon2 iterations.", in: 1...UInt64.max)
    let memory = Option<UInt64>.number("--kdf-memory", valueName: "bytes", help: "Argon2 memory in bytes (a multiple of 1024).", in: 1...UInt64.max)
    let parallelism = Option<UInt32>.number("--kdf-parallelism", valueName: "n", help: "Argon2 lanes.", in: 1...UInt32.max)
    let rounds = Option<UInt64>.number("--kdf-rounds", valueName: "n", help: "AES-KDF rounds.", in: 1...UInt64.max)
    let compression = Option<FormatChange.Compression>("--compression", help: "Payload compression (default: the input's).")
    let dropUnsupported = Flag("--drop-unsupported", help: "With --version: leave out exactly what that version cannot store (each listed).")
    let credentials = CredentialOptions()

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        let parsed = try parse(arguments, count: 1...1)
        guard let target = parsed[outputPath] else { throw CommandLineError.usage(message: "convert needs -o <out>", command: name) }
        var change = FormatChange()
        change.version = parsed[version]
        change.cipher = parsed[cipher]
        change.kdf = parsed[kdf]
        change.compression = parsed[compression]
        change.argon2Iterations = parsed[iterations]
        change.argon2Memory = parsed[memory]
        change.argon2Parallelism = parsed[parallelism]
        change.aesRounds = parsed[rounds]
        // Every option is checked before the password is asked for.
        do { try change.validate() } catch { throw CommandLineError.usage(message: "\(error)", command: name) }
        let unlocked = try credentials.unlock(parsed, path: parsed.positionals[0], command: name)
        let conversion: Conversion
        do {
            conversion = try unlocked.convert(change, dropUnsupported: parsed[dropUnsupported], toPath: target)
        } catch let error as FormatChange.Invalid {
            throw CommandLineError.usage(message: "\(error)", command: name)
        }
        output.print("wrote \(target.terminalSafe): " + conversion.format.oneLine)
        for gap in conversion.dropped { output.print("dropped: \(gap)") }
        if conversion.unkeptAttachmentProtection > 0 {
            output.print("note: \(conversion.unkeptAttachmentProtection) attachment(s) flagged protected: KDBX \(conversion.format.version) keeps no per-attachment protection flag (they stay encrypted with the file)")
        }
        return .success
    }
}

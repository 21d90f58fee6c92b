internal import Foundation
internal import KDBXFormat
internal import MyPassCore
internal import MyPassCrypto
internal import MyPassSync

/// `mypass-sync convert VAULT -o OUT [...]`: the same vault saved with another version, cipher or KDF.
struct ConvertCommand: Command {
    let name = "convert"
    let summary = "Save a vault as another KDBX version, cipher or KDF, with the same credentials."
    let usage = "mypass-sync convert <vault> -o <out> [--version 3.1|4.0|4.1] [--cipher aes256|chacha20|twofish] [--kdf argon2d|argon2id|aes-kdf] [KDF options] [credentials]"
    let options: [OptionSpec] = [
        .value("--output", "-o", valueName: "out", help: "Where to write the converted vault (replaced atomically)."),
        .value("--version", valueName: "3.1|4.0|4.1", help: "Container version (default: the input's; 4.1 content keeps 4.1)."),
        .value("--cipher", valueName: "aes256|chacha20|twofish", help: "Payload cipher (default: the input's)."),
        .value("--kdf", valueName: "argon2d|argon2id|aes-kdf", help: "Key derivation (default: the input's)."),
        .value("--kdf-iterations", valueName: "n", help: "Argon2 iterations."),
        .value("--kdf-memory", valueName: "bytes", help: "Argon2 memory in bytes (a multiple of 1024)."),
        .value("--kdf-parallelism", valueName: "n", help: "Argon2 lanes."),
        .value("--kdf-rounds", valueName: "n", help: "AES-KDF rounds."),
        .value("--compression", valueName: "gzip|none", help: "Payload compression (default: the input's)."),
        .flag("--drop-unsupported", help: "With --version: leave out exactly what that version cannot store (each listed)."),
    ] + Credentials.options
    var details: String {
        """
        ARGUMENTS:
          <vault>                 The .kdbx file to convert (not modified).

        \(options.helpSection)

        A new KDF or KDF setting gets a fresh random salt. The output is verified by opening it again
        with the same credentials before it replaces anything. Content that the requested --version
        cannot store (KDBX 4.1's PreviousParentGroup, group tags, QualityCheck, custom-data and icon
        times; KDBX 4's header plugin data) is refused (exit 6, naming it) unless --drop-unsupported;
        without --version the input's version is kept.
        """
    }

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        let parsed = try ParsedArguments.parse(arguments, options: options, command: name)
        guard parsed.positionals.count == 1 else {
            throw CommandLineError.usage(message: "convert takes exactly one vault", command: name)
        }
        guard let outputPath = parsed.value("output") else {
            throw CommandLineError.usage(message: "convert needs -o <out>", command: name)
        }
        // Check every option before asking for the password.
        let request = try ConversionRequest(parsed, command: name)
        let unlocked = try Credentials.openVault(parsed, path: parsed.positionals[0], command: name)
        var settings = try request.apply(to: unlocked.opened.settings, command: name)
        var vault = unlocked.opened.vault
        // A version asked for is written or refused, never silently raised.
        let dropped = request.version.map { VersionFit.gaps(in: vault, settings: settings, writtenAs: $0) } ?? []
        if let version = request.version, !dropped.isEmpty {
            guard parsed.flag("drop-unsupported") else {
                throw KDBXError.unwritable("KDBX \(version) cannot store what this vault holds: "
                    + dropped.map(\.description).joined(separator: "; ") + ". --drop-unsupported writes \(version) without exactly that")
            }
            (vault, settings) = VersionFit.dropping(unsupportedBy: version, from: vault, settings: settings)
        }
        let (file, derived) = try KDBXWriter.serialize(
            vault, settings: settings, key: unlocked.key, cachedKey: unlocked.opened.derivedKey, limits: unlocked.limits)
        let check = try KDBXReader.open(file, key: unlocked.key, cachedKey: derived, limits: unlocked.limits)
        guard check.vault == vault else {
            throw KDBXError.unwritable("the converted file did not read back identical; nothing was written")
        }
        ProcessLifetime.keepUntilExit(check)
        try AtomicFileWriter.write(file, toPath: outputPath)
        let header = try KDBXReader.header(of: file)
        output.print("wrote \(outputPath.terminalSafe): " + HeaderFacts(header).oneLine)
        for gap in dropped { output.print("dropped: \(gap)") }
        return .success
    }
}

/// The format changes `convert` was asked for.
private struct ConversionRequest {
    var version: KDBXVersion?
    var cipher: PayloadCipher?
    var kdfName: String?
    var compression: PayloadCompression?
    var iterations: UInt64?
    var memory: UInt64?
    var parallelism: UInt32?
    var rounds: UInt64?

    init(_ arguments: ParsedArguments, command: String) throws {
        func usage(_ message: String) -> CommandLineError { .usage(message: message, command: command) }
        if let text = arguments.value("version") {
            switch text {
            case "3.1": version = .v3_1
            case "4", "4.0": version = .v4_0
            case "4.1": version = .v4_1
            default: throw usage("--version must be 3.1, 4.0 or 4.1")
            }
        }
        if let text = arguments.value("cipher") {
            guard let parsed = PayloadCipher(rawValue: text) else { throw usage("--cipher must be aes256, chacha20 or twofish") }
            cipher = parsed
        }
        if let text = arguments.value("kdf") {
            guard ["argon2d", "argon2id", "aes-kdf"].contains(text) else { throw usage("--kdf must be argon2d, argon2id or aes-kdf") }
            kdfName = text
        }
        if let text = arguments.value("compression") {
            guard text == "gzip" || text == "none" else { throw usage("--compression must be gzip or none") }
            compression = text == "gzip" ? .gzip : PayloadCompression.none
        }
        func number<T: FixedWidthInteger>(_ key: String, _ type: T.Type) throws -> T? {
            guard let text = arguments.value(key) else { return nil }
            guard let value = T(text), value > 0 else { throw usage("--\(key) takes a positive number") }
            return value
        }
        iterations = try number("kdf-iterations", UInt64.self)
        memory = try number("kdf-memory", UInt64.self)
        parallelism = try number("kdf-parallelism", UInt32.self)
        rounds = try number("kdf-rounds", UInt64.self)
        if let memory, memory % 1024 != 0 { throw usage("--kdf-memory must be a multiple of 1024 bytes") }
        if version == .v3_1, let kdfName, kdfName != "aes-kdf" {
            throw usage("KDBX 3.1 supports only AES-KDF: add --kdf aes-kdf or choose --version 4.0")
        }
    }

    /// `current` with the requested changes; a changed KDF or KDF setting gets a fresh salt.
    func apply(to current: FormatSettings, command: String) throws -> FormatSettings {
        var settings = current
        if let version { settings.version = version }
        if let cipher { settings.cipher = cipher }
        if let compression { settings.compression = compression }
        let targetKDF = kdfName ?? (version == .v3_1 ? "aes-kdf" : current.kdf.name)
        var kdf = current.kdf
        if targetKDF != current.kdf.name {
            kdf = targetKDF == "aes-kdf"
                ? .aesKDF(seed: Data(count: 32), rounds: 2_000_000)
                : .argon2(.init(variant: targetKDF == "argon2d" ? .argon2d : .argon2id, salt: Data(count: 32),
                                iterations: 2, memoryBytes: 64 << 20, parallelism: 2))
        }
        switch kdf {
        case .aesKDF(let seed, let currentRounds):
            guard iterations == nil, memory == nil, parallelism == nil else {
                throw CommandLineError.usage(message: "AES-KDF takes --kdf-rounds, not Argon2 options", command: command)
            }
            kdf = .aesKDF(seed: seed, rounds: rounds ?? currentRounds)
        case .argon2(var argon2):
            guard rounds == nil else {
                throw CommandLineError.usage(message: "Argon2 takes --kdf-iterations/--kdf-memory/--kdf-parallelism, not --kdf-rounds", command: command)
            }
            argon2.iterations = iterations ?? argon2.iterations
            argon2.memoryBytes = memory ?? argon2.memoryBytes
            argon2.parallelism = parallelism ?? argon2.parallelism
            kdf = .argon2(argon2)
        }
        if settings.version == .v3_1 && kdf.name != "aes-kdf" {
            throw CommandLineError.usage(message: "KDBX 3.1 supports only AES-KDF: add --kdf aes-kdf or choose --version 4.0", command: command)
        }
        if kdf != current.kdf {
            kdf = try kdf.withFreshSalt()
        }
        settings.kdf = kdf
        return settings
    }
}

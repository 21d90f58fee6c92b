internal import Foundation
internal import SyncFiles
internal import SyncState
internal import KDBXFormat

/// The format of a vault file in the words of CLI.md (`info`, and `format` in `export --format json`):
/// version, cipher, KDF with its parameters in user units, compression.
public struct VaultFormat: Sendable, Encodable {
    let settings: FormatSettings

    init(settings: FormatSettings) {
        self.settings = settings
    }

    init(_ header: OuterHeader) {
        settings = FormatSettings(header)
    }

    /// The container version (`4.0`).
    public var version: String { settings.version.description }
    /// The payload cipher (`aes256`, `chacha20`, `twofish`).
    public var cipher: String { settings.cipher.rawValue }
    /// The key derivation (`argon2d`, `argon2id`, `aes-kdf`).
    public var kdf: String { settings.kdf.name }
    /// The payload compression (`gzip`, `none`).
    public var compression: String { settings.compression.name }
    /// The file's version is read but not written (KDBX 2.x): a save writes 3.1.
    public var isReadOnlyVersion: Bool { !settings.version.isWritten }
    /// Whether the file keeps a protection flag per attachment (KDBX 4). A 3.1 file keeps none: its
    /// attachments are encrypted with the payload and read back unflagged.
    public var keepsAttachmentProtection: Bool { settings.version.keepsAttachmentProtection }

    /// What `info` says about attachment protection.
    public var attachmentProtectionText: String {
        keepsAttachmentProtection
            ? "encrypted with the payload, each with its protection flag"
            : "encrypted with the payload; KDBX \(version) keeps no per-attachment protection flag"
    }

    /// KDF parameters in user units.
    public struct KDFFacts: Sendable, Encodable {
        /// AES-KDF rounds.
        public var rounds: UInt64?
        /// Argon2 iterations.
        public var iterations: UInt64?
        /// Argon2 memory in bytes.
        public var memoryBytes: UInt64?
        /// Argon2 lanes.
        public var parallelism: UInt32?
        /// Argon2 version (`0x13`).
        public var argon2Version: String?
    }

    /// The KDF's parameters.
    public var kdfParameters: KDFFacts {
        switch settings.kdf {
        case .aesKDF(_, let rounds):
            KDFFacts(rounds: rounds)
        case .argon2(let argon2):
            KDFFacts(iterations: argon2.iterations, memoryBytes: argon2.memoryBytes, parallelism: argon2.parallelism,
                     argon2Version: "0x" + String(argon2.version, radix: 16))
        }
    }

    private enum CodingKeys: String, CodingKey { case version, cipher, kdf, compression, kdfParameters, keepsAttachmentProtection }

    /// The `format` object of `info --json` and `export`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(version, forKey: .version)
        try container.encode(cipher, forKey: .cipher)
        try container.encode(kdf, forKey: .kdf)
        try container.encode(compression, forKey: .compression)
        try container.encode(kdfParameters, forKey: .kdfParameters)
        try container.encode(keepsAttachmentProtection, forKey: .keepsAttachmentProtection)
    }

    /// The KDF with its parameters: `argon2id (iterations 2, memory 64 MiB, parallelism 2, version 0x13)`.
    public var kdfText: String {
        let facts = kdfParameters
        if let rounds = facts.rounds { return kdf + " (\(rounds) rounds)" }
        guard let iterations = facts.iterations, let memory = facts.memoryBytes, let parallelism = facts.parallelism else { return kdf }
        return kdf + " (iterations \(iterations), memory \(Self.formatBytes(memory)), parallelism \(parallelism)"
            + ", version \(facts.argon2Version ?? "?"))"
    }

    /// The version as `info` shows it, with what a save writes when this version is only read.
    public var versionText: String {
        "KDBX \(version)" + (isReadOnlyVersion ? " (KeePass 2.0x: read; a save writes KDBX 3.1)" : "")
    }

    /// One line: `KDBX 4.0, chacha20, argon2id (...), gzip`.
    public var oneLine: String { [versionText, cipher, kdfText, compression].joined(separator: ", ") }

    private static func formatBytes(_ bytes: UInt64) -> String {
        if bytes % (1 << 20) == 0 { return "\(bytes >> 20) MiB" }
        if bytes % (1 << 10) == 0 { return "\(bytes >> 10) KiB" }
        return "\(bytes) bytes"
    }
}

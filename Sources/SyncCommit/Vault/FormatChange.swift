internal import Foundation
internal import SyncFiles
internal import SyncState
internal import KDBXFormat
internal import MyPassCore
internal import MyPassCrypto

/// The format changes a conversion asks for (`convert`): each part nil keeps the vault's own.
public struct FormatChange: Sendable {
    /// A container version this project writes.
    public enum Version: String, Sendable, CaseIterable {
        case v3_1 = "3.1", v4_0 = "4.0", v4_1 = "4.1"

        var kdbx: KDBXVersion {
            switch self {
            case .v3_1: .v3_1
            case .v4_0: .v4_0
            case .v4_1: .v4_1
            }
        }
    }

    /// A payload cipher.
    public enum Cipher: String, Sendable, CaseIterable {
        case aes256, chacha20, twofish

        var payloadCipher: PayloadCipher {
            switch self {
            case .aes256: .aes256
            case .chacha20: .chaCha20
            case .twofish: .twofish
            }
        }
    }

    /// A key derivation function.
    public enum KDF: String, Sendable, CaseIterable {
        case argon2d, argon2id
        case aesKDF = "aes-kdf"
    }

    /// Payload compression.
    public enum Compression: String, Sendable, CaseIterable {
        case gzip, none
    }

    /// The container version to write.
    public var version: Version?
    /// The payload cipher.
    public var cipher: Cipher?
    /// The key derivation.
    public var kdf: KDF?
    /// The payload compression.
    public var compression: Compression?
    /// Argon2 iterations.
    public var argon2Iterations: UInt64?
    /// Argon2 memory in bytes (a multiple of 1024).
    public var argon2Memory: UInt64?
    /// Argon2 lanes.
    public var argon2Parallelism: UInt32?
    /// AES-KDF rounds.
    public var aesRounds: UInt64?

    /// No change: every part keeps the vault's own.
    public init() {}

    /// Why a requested change cannot be made (the caller's request is wrong, not the vault).
    public struct Invalid: Error, Sendable, CustomStringConvertible {
        /// What is wrong with the request.
        public let description: String
    }

    /// The settings a newly chosen KDF starts from (then overridden by the options given): AES-KDF
    /// at 2,000,000 rounds; Argon2 at 2 iterations, 64 MiB, 2 lanes.
    static func defaults(for kdf: KDF) -> KDFParameters {
        switch kdf {
        case .aesKDF: .aesKDF(seed: Data(count: 32), rounds: 2_000_000)
        case .argon2d, .argon2id:
            .argon2(.init(variant: kdf == .argon2d ? .argon2d : .argon2id, salt: Data(count: 32), iterations: 2,
                          memoryBytes: 64 << 20, parallelism: 2))
        }
    }

    /// Checks what can be checked without the vault (before a password is asked for).
    public func validate() throws {
        if let argon2Memory, argon2Memory % 1024 != 0 { throw Invalid(description: "the Argon2 memory must be a multiple of 1024 bytes") }
        if version == .v3_1, let kdf, kdf != .aesKDF {
            throw Invalid(description: "KDBX 3.1 supports only AES-KDF: choose the AES-KDF or version 4.0")
        }
    }

    /// `current` with the requested changes; a changed KDF or KDF setting gets a fresh salt.
    func apply(to current: FormatSettings) throws -> FormatSettings {
        try validate()
        var settings = current
        if let version { settings.version = version.kdbx }
        if let cipher { settings.cipher = cipher.payloadCipher }
        if let compression { settings.compression = compression == .gzip ? .gzip : PayloadCompression.none }
        let currentName = KDF(rawValue: current.kdf.name)
        let target = kdf ?? (version == .v3_1 ? .aesKDF : currentName)
        var parameters = current.kdf
        if let target, target != currentName { parameters = Self.defaults(for: target) }
        switch parameters {
        case .aesKDF(let seed, let rounds):
            guard argon2Iterations == nil, argon2Memory == nil, argon2Parallelism == nil else {
                throw Invalid(description: "AES-KDF takes a number of rounds, not Argon2 settings")
            }
            parameters = .aesKDF(seed: seed, rounds: aesRounds ?? rounds)
        case .argon2(var argon2):
            guard aesRounds == nil else { throw Invalid(description: "Argon2 takes iterations, memory and parallelism, not AES-KDF rounds") }
            argon2.iterations = argon2Iterations ?? argon2.iterations
            argon2.memoryBytes = argon2Memory ?? argon2.memoryBytes
            argon2.parallelism = argon2Parallelism ?? argon2.parallelism
            parameters = .argon2(argon2)
        }
        if settings.version == .v3_1, case .argon2 = parameters {
            throw Invalid(description: "KDBX 3.1 supports only AES-KDF: choose the AES-KDF or version 4.0")
        }
        if parameters != current.kdf { parameters = try parameters.withFreshSalt() }
        settings.kdf = parameters
        return settings
    }
}

/// What a conversion wrote.
public struct Conversion: Sendable {
    /// The format of the file written.
    public let format: VaultFormat
    /// What the requested version cannot store and was left out (each said).
    public let dropped: [String]
    /// How many attachment contents were flagged protected, a flag the version written keeps none of
    /// (KDBX 3.1: the contents stay encrypted with the file; `KDBXVersion.keepsAttachmentProtection`).
    public let unkeptAttachmentProtection: Int
}

extension UnlockedVault {
    /// Writes this vault to `target` with the format `change` asks for, verified by opening it again.
    /// Content the requested version cannot store is refused (naming it) unless `dropUnsupported`.
    public func convert(_ change: FormatChange, dropUnsupported: Bool, toPath target: String) throws -> Conversion {
        var settings = try change.apply(to: opened.settings)
        var vault = opened.vault
        // A new cipher, KDF or compression is a settings change: a merge without a base decides by it (MERGE.md rule 13).
        let current = opened.settings
        if settings.cipher != current.cipher || KDFChoice(settings.kdf) != KDFChoice(current.kdf) || settings.compression != current.compression {
            vault.meta.settingsChanged = .now()
        }
        // A version asked for is written or refused, never silently raised.
        let gaps = change.version.map { VersionFit.gaps(in: vault, settings: settings, writtenAs: $0.kdbx) } ?? []
        if let version = change.version, !gaps.isEmpty {
            guard dropUnsupported else {
                throw FormatChange.Unstorable(version: version.rawValue, gaps: gaps.map(\.description))
            }
            (vault, settings) = VersionFit.dropping(unsupportedBy: version.kdbx, from: vault, settings: settings)
        }
        let key = try requireCredentials().key
        let (file, _) = try VerifiedEncoding.encode(vault, settings: settings, key: key, cachedKey: opened.derivedKey, limits: self.file.limits)
        try AtomicFileWriter.write(file, toPath: target, on: self.file.fileSystem)
        let header = try KDBXReader.header(of: file)
        return Conversion(format: VaultFormat(header), dropped: gaps.map(\.description),
                          unkeptAttachmentProtection: VersionFit.unkeptAttachmentProtection(in: vault, writtenAs: header.version))
    }
}

extension FormatChange {
    /// The version asked for cannot store content the vault holds: nothing was written.
    public struct Unstorable: Error, CustomStringConvertible, RemediableFailure, Sendable {
        /// The KDBX version asked for.
        public let version: String
        /// What it cannot store, one item each.
        public let gaps: [String]

        public var description: String {
            "KDBX \(version) cannot store what this vault holds: " + gaps.joined(separator: "; ") + "; nothing was written"
        }

        /// The conversion may leave exactly that out.
        public var remedy: Remedy? { .allowDroppingUnsupported(version: version) }
    }
}

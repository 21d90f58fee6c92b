public import Foundation
internal import MyPassCore
public import MyPassCrypto

/// The key-derivation function of a vault and its settings, as the header stores them.
public enum KDFParameters: Sendable, Equatable {
    /// KeePass's AES key transformation: `rounds` of AES-256-ECB under `seed`.
    case aesKDF(seed: Data, rounds: UInt64)
    /// Argon2d or Argon2id; `memoryBytes` as KDBX stores it (a multiple of 1 KiB).
    case argon2(Argon2Settings)

    /// Argon2 settings in KDBX's units.
    public struct Argon2Settings: Sendable, Equatable {
        /// Argon2d or Argon2id.
        public var variant: Argon2.Variant
        /// The salt (drawn anew for every save unless the device says otherwise).
        public var salt: Data
        /// Passes over the memory.
        public var iterations: UInt64
        /// Memory in bytes.
        public var memoryBytes: UInt64
        /// Lanes.
        public var parallelism: UInt32
        /// The Argon2 version (0x13).
        public var version: UInt32
        /// Argon2's optional secret input.
        public var secret: Data?
        /// Argon2's optional associated data.
        public var associatedData: Data?

        /// Argon2 settings with these values.
        public init(
            variant: Argon2.Variant, salt: Data, iterations: UInt64, memoryBytes: UInt64,
            parallelism: UInt32, version: UInt32 = 0x13, secret: Data? = nil, associatedData: Data? = nil
        ) {
            self.variant = variant
            self.salt = salt
            self.iterations = iterations
            self.memoryBytes = memoryBytes
            self.parallelism = parallelism
            self.version = version
            self.secret = secret
            self.associatedData = associatedData
        }
    }

    /// KDF UUIDs as KeePass defines them.
    enum Identifier {
        static let aesKDF3 = UUID(uuidString: "C9D9F39A-628A-4460-BF74-0D08C18A4FEA")!
        static let aesKDF4 = UUID(uuidString: "7C02BB82-79A7-4AC0-927D-114A00648238")!
        static let argon2d = UUID(uuidString: "EF636DDF-8C29-444B-91F7-A9A403E30A0C")!
        static let argon2id = UUID(uuidString: "9E298B19-56DB-4773-B23D-FC3EC6F0A1E6")!
    }

    /// The name used by `info`, `export` and `convert`.
    /// A SHA-256 identifying these exact settings (kind, costs, salt, secret): a stored derived key
    /// serves a vault only while its header's KDF has the same fingerprint.
    public var fingerprint: Data {
        var text: String
        switch self {
        case .aesKDF(let seed, let rounds):
            text = "aes-kdf|\(rounds)|\(seed.base64EncodedString())"
        case .argon2(let settings):
            text = "argon2|\(settings.variant)|\(settings.iterations)|\(settings.memoryBytes)|\(settings.parallelism)|"
                + "\(settings.version)|\(settings.salt.base64EncodedString())|\(settings.secret?.base64EncodedString() ?? "-")|"
                + "\(settings.associatedData?.base64EncodedString() ?? "-")"
        }
        return SHA256.hash(Data(text.utf8))
    }

    /// The name used by `info`, `export` and `convert`.
    public var name: String {
        switch self {
        case .aesKDF: "aes-kdf"
        case .argon2(let settings): settings.variant == .argon2d ? "argon2d" : "argon2id"
        }
    }

    /// The random part (seed or salt), which a new derivation is needed for when it changes.
    public var salt: Data {
        switch self {
        case .aesKDF(let seed, _): seed
        case .argon2(let settings): settings.salt
        }
    }

    /// The same settings with a new random seed or salt of the same length.
    public func withFreshSalt() throws(KDBXError) -> KDFParameters {
        let fresh: Data
        do { fresh = try RandomBytes.data(count: max(salt.count, 32)) } catch { throw .crypto(error) }
        switch self {
        case .aesKDF(_, let rounds): return .aesKDF(seed: fresh, rounds: rounds)
        case .argon2(var settings):
            settings.salt = fresh
            return .argon2(settings)
        }
    }

    /// Reads the KDBX 4 form (a VariantDictionary with `$UUID`).
    init(dictionary: VariantDictionary) throws(KDBXError) {
        guard case .bytes(let uuidBytes)? = dictionary["$UUID"], let uuid = UUID(bytes: uuidBytes) else {
            throw .corrupt("KDF parameters without a valid $UUID")
        }
        func bytes(_ key: String) throws(KDBXError) -> Data {
            guard case .bytes(let value)? = dictionary[key] else { throw .corrupt("KDF parameter \(key) missing or mistyped") }
            return value
        }
        func optionalBytes(_ key: String) throws(KDBXError) -> Data? {
            guard let value = dictionary[key] else { return nil }
            guard case .bytes(let raw) = value else { throw .corrupt("KDF parameter \(key) mistyped") }
            return raw
        }
        func uint64(_ key: String) throws(KDBXError) -> UInt64 {
            guard case .uint64(let value)? = dictionary[key] else { throw .corrupt("KDF parameter \(key) missing or mistyped") }
            return value
        }
        func uint32(_ key: String) throws(KDBXError) -> UInt32 {
            guard case .uint32(let value)? = dictionary[key] else { throw .corrupt("KDF parameter \(key) missing or mistyped") }
            return value
        }
        switch uuid {
        case Identifier.aesKDF3, Identifier.aesKDF4:
            self = .aesKDF(seed: try bytes("S"), rounds: try uint64("R"))
        case Identifier.argon2d, Identifier.argon2id:
            self = .argon2(Argon2Settings(
                variant: uuid == Identifier.argon2d ? .argon2d : .argon2id,
                salt: try bytes("S"), iterations: try uint64("I"), memoryBytes: try uint64("M"),
                parallelism: try uint32("P"), version: try uint32("V"),
                secret: try optionalBytes("K"), associatedData: try optionalBytes("A")))
        default:
            throw .unsupported("KDF \(uuid.uuidString.lowercased())")
        }
    }

    /// The KDBX 4 form.
    var dictionary: VariantDictionary {
        var dictionary = VariantDictionary()
        switch self {
        case .aesKDF(let seed, let rounds):
            dictionary["$UUID"] = .bytes(Identifier.aesKDF3.data)
            dictionary["R"] = .uint64(rounds)
            dictionary["S"] = .bytes(seed)
        case .argon2(let settings):
            dictionary["$UUID"] = .bytes((settings.variant == .argon2d ? Identifier.argon2d : Identifier.argon2id).data)
            dictionary["S"] = .bytes(settings.salt)
            dictionary["P"] = .uint32(settings.parallelism)
            dictionary["M"] = .uint64(settings.memoryBytes)
            dictionary["I"] = .uint64(settings.iterations)
            dictionary["V"] = .uint32(settings.version)
            if let secret = settings.secret { dictionary["K"] = .bytes(secret) }
            if let associatedData = settings.associatedData { dictionary["A"] = .bytes(associatedData) }
        }
        return dictionary
    }

    /// Checks the parameters against `limits` before anything is allocated or derived.
    public func check(against limits: ResourceLimits) throws(KDBXError) {
        switch self {
        case .aesKDF(let seed, let rounds):
            guard seed.count == 32 else { throw .corrupt("AES-KDF seed must be 32 bytes") }
            guard rounds <= limits.maximumAESKDFRounds else {
                throw .resourceCapExceeded("AES-KDF rounds \(rounds) exceed the limit \(limits.maximumAESKDFRounds)")
            }
        case .argon2(let settings):
            guard settings.memoryBytes <= limits.maximumArgon2MemoryBytes else {
                throw .resourceCapExceeded(
                    "Argon2 memory \(settings.memoryBytes) bytes exceeds the limit \(limits.maximumArgon2MemoryBytes)")
            }
            guard settings.iterations <= limits.maximumArgon2Iterations else {
                throw .resourceCapExceeded("Argon2 iterations \(settings.iterations) exceed the limit \(limits.maximumArgon2Iterations)")
            }
            let work = settings.memoryBytes.multipliedReportingOverflow(by: settings.iterations)
            guard !work.overflow, work.partialValue <= limits.maximumArgon2Work else {
                throw .resourceCapExceeded("Argon2 work (memory \(settings.memoryBytes) bytes x \(settings.iterations) iterations) "
                                           + "exceeds the limit \(limits.maximumArgon2Work)")
            }
            guard settings.parallelism <= limits.maximumArgon2Parallelism else {
                throw .resourceCapExceeded("Argon2 parallelism \(settings.parallelism) exceeds the limit \(limits.maximumArgon2Parallelism)")
            }
            guard settings.memoryBytes % 1024 == 0, settings.memoryBytes / 1024 <= UInt64(UInt32.max),
                  settings.iterations >= 1, settings.iterations <= UInt64(UInt32.max), settings.parallelism >= 1
            else {
                throw .corrupt("Argon2 parameters out of range")
            }
        }
    }

    /// Derives the 32-byte transformed key from the composite key.
    func deriveKey(from compositeKey: SecureBytes, limits: ResourceLimits) throws(KDBXError) -> SecureBytes {
        try check(against: limits)
        do {
            switch self {
            case .aesKDF(let seed, let rounds):
                return try AESKDF.deriveKey(from: compositeKey, seed: seed, rounds: rounds)
            case .argon2(let settings):
                let parameters = Argon2.Parameters(
                    variant: settings.variant, version: settings.version,
                    iterations: UInt32(settings.iterations), memoryKiB: UInt32(settings.memoryBytes / 1024),
                    parallelism: settings.parallelism, salt: settings.salt,
                    secret: settings.secret.map { SecureBytes($0) }, associatedData: settings.associatedData,
                    outputLength: 32)
                return try Argon2.deriveKey(password: compositeKey, parameters: parameters)
            }
        } catch {
            if case .invalidParameter(let detail) = error { throw .corrupt(detail) }
            throw .crypto(error)
        }
    }
}

/// Caps on what an untrusted header may ask for, checked before any allocation or derivation.
/// The defaults open every vault KeePass 2 and KeePassXC create with their own settings dialogs
/// up to 2 GiB of Argon2 memory; raise them (`--max-kdf-memory`) for larger settings.
public struct ResourceLimits: Sendable, Equatable {
    /// Largest Argon2 memory accepted, in bytes (default 2 GiB).
    public var maximumArgon2MemoryBytes: UInt64
    /// Largest Argon2 iteration count accepted (default 10,000).
    public var maximumArgon2Iterations: UInt64
    /// Largest Argon2 parallelism accepted (default 256).
    public var maximumArgon2Parallelism: UInt32
    /// Largest AES-KDF round count accepted (default 2^32 - 1, about 80 s here).
    public var maximumAESKDFRounds: UInt64
    /// Largest decompressed payload accepted, in bytes (default 2 GiB).
    public var maximumPayloadBytes: Int
    /// Largest Argon2 work accepted: memory in bytes times iterations, what a derivation's time goes
    /// with (default: no cap beyond the two).
    public var maximumArgon2Work: UInt64 = .max

    /// Caps with these values.
    public init(
        maximumArgon2MemoryBytes: UInt64 = 2 << 30, maximumArgon2Iterations: UInt64 = 10_000,
        maximumArgon2Parallelism: UInt32 = 256, maximumAESKDFRounds: UInt64 = UInt64(UInt32.max),
        maximumPayloadBytes: Int = 2 << 30
    ) {
        self.maximumArgon2MemoryBytes = maximumArgon2MemoryBytes
        self.maximumArgon2Iterations = maximumArgon2Iterations
        self.maximumArgon2Parallelism = maximumArgon2Parallelism
        self.maximumAESKDFRounds = maximumAESKDFRounds
        self.maximumPayloadBytes = maximumPayloadBytes
    }

    /// The documented defaults.
    public static let standard = ResourceLimits()
}

extension KDFParameters {
    /// Whether `other` costs the same to derive: the same function with the same rounds, or the same
    /// Argon2 variant, memory, iterations and parallelism (the salt aside: every save may draw a new one).
    public func hasSameCost(as other: KDFParameters) -> Bool {
        switch (self, other) {
        case let (.aesKDF(_, rounds), .aesKDF(_, otherRounds)):
            rounds == otherRounds
        case let (.argon2(settings), .argon2(otherSettings)):
            settings.variant == otherSettings.variant && settings.memoryBytes == otherSettings.memoryBytes
                && settings.iterations == otherSettings.iterations && settings.parallelism == otherSettings.parallelism
        default:
            false
        }
    }
}

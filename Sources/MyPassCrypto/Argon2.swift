public import Foundation
internal import CArgon2

/// Argon2d and Argon2id (RFC 9106) from libargon2, with every parameter KDBX 4 can carry:
/// any iterations, memory and parallelism, salts of any length from 8 bytes, an optional secret key
/// and associated data, versions 0x10 and 0x13.
public enum Argon2 {
    /// The Argon2 variant.
    public enum Variant: Sendable, Equatable {
        /// Data-dependent addressing (KDBX 4's default Argon2).
        case argon2d
        /// Hybrid addressing (RFC 9106's recommended variant).
        case argon2id

        fileprivate var libraryType: argon2_type {
            self == .argon2d ? Argon2_d : Argon2_id
        }
    }

    /// Everything the derivation depends on except the password.
    public struct Parameters: Sendable, Equatable {
        /// Argon2d or Argon2id.
        public var variant: Variant
        /// Algorithm version: 0x13 (current) or 0x10.
        public var version: UInt32
        /// Number of passes over memory (t), at least 1.
        public var iterations: UInt32
        /// Memory in KiB (m), at least 8 per lane.
        public var memoryKiB: UInt32
        /// Number of lanes (p), 1 to 2^24 - 1.
        public var parallelism: UInt32
        /// The salt, at least 8 bytes (KDBX uses 32).
        public var salt: Data
        /// Optional secret key (K), mixed into the hash.
        public var secret: SecureBytes?
        /// Optional associated data (X).
        public var associatedData: Data?
        /// Output length in bytes, at least 4.
        public var outputLength: Int

        /// Parameters with no secret, no associated data, version 0x13 and a 32-byte output unless given.
        public init(
            variant: Variant, version: UInt32 = 0x13, iterations: UInt32, memoryKiB: UInt32,
            parallelism: UInt32, salt: Data, secret: SecureBytes? = nil, associatedData: Data? = nil,
            outputLength: Int = 32
        ) {
            self.variant = variant
            self.version = version
            self.iterations = iterations
            self.memoryKiB = memoryKiB
            self.parallelism = parallelism
            self.salt = salt
            self.secret = secret
            self.associatedData = associatedData
            self.outputLength = outputLength
        }

        /// Throws `.invalidParameter` for anything libargon2 would refuse, before any allocation.
        public func validate() throws(CryptoError) {
            guard version == 0x10 || version == 0x13 else {
                throw .invalidParameter("Argon2 version must be 0x10 or 0x13")
            }
            guard iterations >= 1 else { throw .invalidParameter("Argon2 iterations must be at least 1") }
            guard (1...0xFF_FFFF).contains(parallelism) else {
                throw .invalidParameter("Argon2 parallelism must be between 1 and 16777215")
            }
            guard UInt64(memoryKiB) >= 8 * UInt64(parallelism) else {
                throw .invalidParameter("Argon2 memory must be at least 8 KiB per lane")
            }
            guard salt.count >= 8, salt.count <= Int(UInt32.max) else {
                throw .invalidParameter("Argon2 salt must be at least 8 bytes")
            }
            guard (4...Int(UInt32.max)).contains(outputLength) else {
                throw .invalidParameter("Argon2 output length must be at least 4 bytes")
            }
        }
    }

    /// Derives `parameters.outputLength` bytes from `password`.
    ///
    /// Runs on as many threads as there are lanes, capped at the processor count (the result does
    /// not depend on the number of threads).
    public static func deriveKey(password: SecureBytes, parameters: Parameters) throws(CryptoError) -> SecureBytes {
        try parameters.validate()
        var output = SecureBytes(count: parameters.outputLength)
        let secret = parameters.secret ?? SecureBytes(count: 0)
        let associatedData = parameters.associatedData ?? Data()
        let threads = min(parameters.parallelism, UInt32(max(ProcessInfo.processInfo.activeProcessorCount, 1)))

        let status: Int32 = output.withUnsafeMutableBytes { out in
            password.withUnsafeBytes { pwd in
                parameters.salt.withUnsafeBytes { salt in
                    secret.withUnsafeBytes { key in
                        associatedData.withUnsafeBytes { ad in
                            var context = argon2_context(
                                out: out.bindMemory(to: UInt8.self).baseAddress,
                                outlen: UInt32(out.count),
                                pwd: mutablePointer(pwd), pwdlen: UInt32(pwd.count),
                                salt: mutablePointer(salt), saltlen: UInt32(salt.count),
                                secret: mutablePointer(key), secretlen: UInt32(key.count),
                                ad: mutablePointer(ad), adlen: UInt32(ad.count),
                                t_cost: parameters.iterations,
                                m_cost: parameters.memoryKiB,
                                lanes: parameters.parallelism,
                                threads: threads,
                                version: parameters.version,
                                allocate_cbk: nil, free_cbk: nil,
                                flags: 0)  // ARGON2_DEFAULT_FLAGS: never wipe the caller's password or secret
                            return argon2_ctx(&context, parameters.variant.libraryType)
                        }
                    }
                }
            }
        }
        guard status == ARGON2_OK.rawValue else {
            let message = argon2_error_message(status).map { String(cString: $0) } ?? "unknown error"
            throw .libraryFailure(library: "libargon2", function: "argon2_ctx", code: status, message: message)
        }
        return output
    }

    /// libargon2 takes `uint8_t *` for inputs it only reads; nil for empty buffers.
    private static func mutablePointer(_ buffer: UnsafeRawBufferPointer) -> UnsafeMutablePointer<UInt8>? {
        guard buffer.count > 0, let base = buffer.baseAddress else { return nil }
        return UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: UInt8.self))
    }
}

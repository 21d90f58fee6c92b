public import Foundation
internal import CGcrypt

/// HMAC-SHA-256 (RFC 2104) with a key of any length, from libgcrypt (see `GcryptDigest`).
public enum HMACSHA256 {
    /// Tag length in bytes.
    public static let byteCount = 32

    /// The authentication code of `message` under `key`.
    public static func authenticationCode(for message: some ContiguousBytes, key: SecureBytes) -> Data {
        var authenticator = Authenticator(key: key)
        authenticator.update(message)
        return authenticator.finalize()
    }

    /// Whether `code` is the authentication code of `message` under `key` (constant-time).
    public static func isValid(
        _ code: some ContiguousBytes, for message: some ContiguousBytes, key: SecureBytes
    ) -> Bool {
        ConstantTime.isEqual(authenticationCode(for: message, key: key), code)
    }

    /// Incremental HMAC-SHA-256 over several pieces of input (a block index, a length, the block).
    public struct Authenticator: ~Copyable {
        private var digest: GcryptDigest

        /// An authenticator keyed with `key`.
        public init(key: SecureBytes) {
            digest = GcryptDigest(algorithm: Int32(GCRY_MD_SHA256.rawValue), hmacKey: key)
        }

        /// Adds `bytes` to the message.
        public mutating func update(_ bytes: some ContiguousBytes) {
            bytes.withUnsafeBytes { digest.update($0) }
        }

        /// The code for everything added; consumes the authenticator (libgcrypt wipes its state).
        public consuming func finalize() -> Data {
            var code = Data(count: HMACSHA256.byteCount)
            code.withUnsafeMutableBytes { digest.finish(into: $0) }
            return code
        }
    }
}

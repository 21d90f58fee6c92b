public import Foundation
internal import CSodium

/// HMAC-SHA-256 (RFC 2104) with a key of any length, from libsodium.
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
        private var state = crypto_auth_hmacsha256_state()

        /// An authenticator keyed with `key`.
        public init(key: SecureBytes) {
            try? CryptoLibraries.ensureInitialized()
            key.withUnsafeBytes { keyBytes in
                _ = crypto_auth_hmacsha256_init(&state, keyBytes.bindMemory(to: UInt8.self).baseAddress!, keyBytes.count)
            }
        }

        /// Adds `bytes` to the message.
        public mutating func update(_ bytes: some ContiguousBytes) {
            bytes.withUnsafeBytes { buffer in
                _ = crypto_auth_hmacsha256_update(&state, buffer.bindMemory(to: UInt8.self).baseAddress, UInt64(buffer.count))
            }
        }

        /// The code for everything added; consumes the authenticator and wipes its state.
        public consuming func finalize() -> Data {
            var code = Data(count: HMACSHA256.byteCount)
            code.withUnsafeMutableBytes { out in
                _ = crypto_auth_hmacsha256_final(&state, out.bindMemory(to: UInt8.self).baseAddress!)
            }
            sodium_memzero(&state, MemoryLayout<crypto_auth_hmacsha256_state>.size)
            return code
        }
    }
}

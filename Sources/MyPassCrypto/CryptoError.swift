/// Errors of the crypto layer. Messages name sizes and library calls, never key material.
public enum CryptoError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A key had the wrong length for the algorithm.
    case invalidKeySize(expected: Int, actual: Int)
    /// An IV or nonce had the wrong length for the algorithm.
    case invalidNonceSize(expected: Int, actual: Int)
    /// Input for an unpadded block mode was not a whole number of blocks.
    case invalidInputLength(blockSize: Int, actual: Int)
    /// Decrypted data did not end in valid PKCS#7 padding (wrong key or corrupt data).
    case invalidPadding
    /// A parameter was outside the range the primitive accepts.
    case invalidParameter(String)
    /// A stream cipher was asked for more keystream than its counter can address.
    case keystreamExhausted
    /// A C library call failed; `code` is the library's own error code.
    case libraryFailure(library: String, function: String, code: Int32, message: String)

    /// The failure in one sentence.
    public var description: String {
        switch self {
        case .invalidKeySize(let expected, let actual):
            return "invalid key size: expected \(expected) bytes, got \(actual)"
        case .invalidNonceSize(let expected, let actual):
            return "invalid IV/nonce size: expected \(expected) bytes, got \(actual)"
        case .invalidInputLength(let blockSize, let actual):
            return "input length \(actual) is not a multiple of the \(blockSize)-byte block size"
        case .invalidPadding:
            return "invalid padding after decryption"
        case .invalidParameter(let detail):
            return "invalid parameter: \(detail)"
        case .keystreamExhausted:
            return "stream cipher counter exhausted"
        case .libraryFailure(let library, let function, let code, let message):
            return "\(library) \(function) failed (\(code)): \(message)"
        }
    }
}

public import MyPassCrypto

/// Everything that can go wrong between bytes and a vault. Messages never contain key material or
/// vault content; "wrong credentials" is kept apart from "corrupt" wherever the format allows.
public enum KDBXError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The file does not start with the KDBX signatures.
    case notKDBX
    /// A KDBX file of a version this reader does not handle (1.x/2.x, 5.x).
    case unsupportedVersion(String)
    /// The data ended inside the named structure.
    case truncated(String)
    /// A structure is malformed or an integrity check failed.
    case corrupt(String)
    /// A header names a cipher, KDF, compression or inner stream this reader does not implement.
    case unsupported(String)
    /// The password or key file is wrong (the header HMAC or the stream start bytes do not match).
    case wrongCredentials
    /// A key file could not be used.
    case invalidKeyFile(String)
    /// The challenge-response component (a YubiKey, a secret, a command) gave no response.
    case challengeResponseFailed(String)
    /// A parameter from the file exceeds a configured resource cap (KDF memory, rounds, sizes).
    case resourceCapExceeded(String)
    /// The vault content cannot be written in the requested version.
    case unwritable(String)
    /// A crypto primitive failed.
    case crypto(CryptoError)

    /// The failure in one sentence, never key material or content.
    public var description: String {
        switch self {
        case .notKDBX: "not a KDBX file (wrong signature)"
        case .unsupportedVersion(let version): "unsupported KDBX version \(version)"
        case .truncated(let context): "file is truncated (in \(context))"
        case .corrupt(let detail): "file is corrupt: \(detail)"
        case .unsupported(let detail): "unsupported: \(detail)"
        case .wrongCredentials: "wrong password or key file"
        case .invalidKeyFile(let detail): "invalid key file: \(detail)"
        case .challengeResponseFailed(let detail): "no challenge-response: \(detail)"
        case .resourceCapExceeded(let detail): "refused: \(detail)"
        case .unwritable(let detail): "cannot write: \(detail)"
        case .crypto(let error): "crypto failure: \(error)"
        }
    }
}

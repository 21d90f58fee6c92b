internal import KDBXFormat
internal import MyPassCore
internal import MyPassMerge

/// What kind of failure an error of the library is, for a caller that reacts by kind (the command
/// line maps each to its documented exit code; an app to a message or a retry).
public enum FailureKind: Sendable, Equatable {
    /// The request itself is wrong (no such entry, an impossible format change).
    case invalidRequest
    /// Wrong password or key file.
    case wrongCredentials
    /// Not a KDBX file, an unsupported version, or a failed integrity check.
    case unreadableVault
    /// Refused to write for safety (kept changing, a rollback, a rotated key, a resource cap).
    case refusedForSafety
    /// An I/O error (a full disk, a denied permission, a missing file).
    case ioError

    /// The kind of `error`.
    public init(of error: any Error) {
        switch error {
        case let error as KDBXError:
            switch error {
            case .wrongCredentials, .invalidKeyFile: self = .wrongCredentials
            case .resourceCapExceeded, .unwritable: self = .refusedForSafety
            case .notKDBX, .unsupportedVersion, .truncated, .corrupt, .unsupported, .crypto: self = .unreadableVault
            }
        case let error as SaveError:
            if case .file = error { self = .ioError } else { self = .refusedForSafety }
        case is MergeError, is MergeRefusal, is RemoteSync.Refusal: self = .refusedForSafety
        case let error as RemoteFailure:
            switch error {
            case .unsupportedURL: self = .invalidRequest
            case .unknownHostKey, .changedHostKey: self = .refusedForSafety
            case .unreachable, .refused, .denied: self = .ioError
            }
        case is VaultEditError, is FormatChange.Invalid, is JournalError: self = .invalidRequest
        default: self = .ioError
        }
    }

    /// What the user can do about `error`, when there is something to say.
    public static func hint(for error: any Error) -> String? {
        if case KDBXError.resourceCapExceeded(let detail) = error, detail.contains("Argon2 memory") {
            return "If you trust this file, raise the cap with --max-kdf-memory <bytes>."
        }
        return nil
    }
}

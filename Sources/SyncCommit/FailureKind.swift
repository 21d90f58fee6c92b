internal import SyncFiles
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
            case .wrongCredentials, .invalidKeyFile, .challengeResponseFailed: self = .wrongCredentials
            case .resourceCapExceeded, .unwritable: self = .refusedForSafety
            case .notKDBX, .unsupportedVersion, .truncated, .corrupt, .unsupported, .crypto: self = .unreadableVault
            }
        case let error as SaveError:
            if case .file = error { self = .ioError } else { self = .refusedForSafety }
        case is MergeError, is MergeRefusal, is FormatChange.Unstorable: self = .refusedForSafety
        case is VaultEditError, is FormatChange.Invalid: self = .invalidRequest
        case let error as any ClassifiedFailure: self = error.failureKind
        default: self = .ioError
        }
    }
}

/// An error of a layer above this one that says its own kind (remote failures, say).
public protocol ClassifiedFailure: Error {
    /// What kind of failure it is.
    var failureKind: FailureKind { get }
}

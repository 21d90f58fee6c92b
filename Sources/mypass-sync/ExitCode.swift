internal import MyPassSync

/// The documented exit statuses of `mypass-sync` (CLI.md); scripts depend on these numbers.
enum ExitCode: Int32 {
    /// Success, including "nothing to do".
    case success = 0
    /// With `--exit-code`: there are differences or changes.
    case differences = 1
    /// The command line was wrong.
    case usage = 2
    /// Wrong password or key file.
    case wrongCredentials = 3
    /// Not a KDBX file, an unsupported version, or a failed integrity check.
    case corrupt = 4
    /// The vault changed on disk and no policy says what to do.
    case decisionNeeded = 5
    /// Refused to write for safety (file kept changing, rollback, key rotated, resource cap).
    case refusedForSafety = 6
    /// An I/O error such as a full disk or a denied permission.
    case ioError = 7

    /// Each status and what it means, in order (the help's EXIT CODES and the man page).
    static let meanings: [(ExitCode, String)] = [
        (.success, "success"), (.differences, "differences (with --exit-code)"), (.usage, "usage error"),
        (.wrongCredentials, "wrong credentials"), (.corrupt, "not a KDBX file / unsupported / corrupt"), (.decisionNeeded, "decision needed"),
        (.refusedForSafety, "refused for safety"), (.ioError, "I/O error"),
    ]

    /// The statuses of a command a signal ended (`ShutdownSignals`), after the numbered ones.
    static let signalStatus = (code: "128+N", meaning: "ended by signal N (130 SIGINT, 143 SIGTERM)")
}

extension ExitCode {
    /// The exit code of a failure of this kind.
    init(_ kind: FailureKind) {
        self = switch kind {
        case .invalidRequest: .usage
        case .wrongCredentials: .wrongCredentials
        case .unreadableVault: .corrupt
        case .refusedForSafety: .refusedForSafety
        case .ioError: .ioError
        }
    }
}

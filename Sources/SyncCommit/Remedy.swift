internal import KDBXFormat

/// What a person can do about a failure, as a value: the library says which remedy applies, the
/// command line (or an app) words it — with its own flags or buttons, which the library does not know.
public enum Remedy: Sendable, Equatable {
    /// Give the other version's credentials (its key was changed on another device).
    case otherVersionsCredentials
    /// Allow the conversion to leave out what the target version cannot store.
    case allowDroppingUnsupported(version: String)
    /// Give the server's credentials in a netrc file instead of the URL.
    case serverCredentialsInNetrc
    /// Log in to the SSH server with a key (an agent or a key file) instead of a password in the URL.
    case sshKeyLogin
    /// Raise the cap on the KDF's memory, if the file is trusted.
    case raiseKDFMemoryCap
    /// Open the vault once with its own limits (its version becomes this device's base), if its
    /// size or key derivation was changed on purpose.
    case takeVaultAsBase
}

/// An error that knows what a person can do about it.
public protocol RemediableFailure: Error {
    /// The remedy, when there is one.
    var remedy: Remedy? { get }
}

extension Remedy {
    /// The remedy for `error`, when one applies.
    public static func of(_ error: any Error) -> Remedy? {
        if let error = error as? any RemediableFailure { return error.remedy }
        if case KDBXError.resourceCapExceeded(let detail) = error, detail.contains("Argon2 memory") { return .raiseKDFMemoryCap }
        return nil
    }
}

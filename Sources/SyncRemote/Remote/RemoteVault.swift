internal import Foundation
internal import SyncFiles
internal import SyncState
public import SyncCommit
#if canImport(Glibc)
internal import Glibc
#endif

/// A vault file on a server, as `RemoteSync` uses it: read it, replace it only while it is still the
/// version the caller merged, and read it back. WebDAV (`WebDAVRemote`) and SFTP (`SFTPRemote`)
/// protect the replace differently; `probe` finds out once per URL whether and how they can.
protocol RemoteVault: Sendable {
    /// The vault's URL.
    var url: String { get }
    /// The most one download may bring; more is stopped and refused (`RemoteSync` ties it to the
    /// vault's size: `ForeignVersionBudget.sizeLimit`).
    var downloadLimit: Int64 { get set }
    /// Checks, on scratch files beside the vault (never the vault), how writes can be protected.
    func probe() throws(RemoteFailure) -> ServerProbe
    /// The file; `.unchanged` only when the server can tell that it still has version `tag`.
    func fetch(ifChangedFrom tag: String?) throws(RemoteFailure) -> RemoteFetch
    /// Takes the server's exclusive write lock (only when the probe chose `.lock`); its token.
    func lock() throws(RemoteFailure) -> String
    /// Gives a lock back.
    func unlock(_ token: String) throws(RemoteFailure)
    /// Puts `data` in place of the vault only if the vault still is `expected`.
    func replace(with data: Data, expected: RemoteExpectation, lockToken: String?) throws(RemoteFailure) -> RemoteReplace
}

/// What a fetch found.
enum RemoteFetch {
    /// The file still has the version asked about.
    case unchanged
    /// No file at the URL.
    case missing
    /// The file's bytes and the server's tag for this version (an ETag; nil when it has none).
    case content(Data, tag: String?)
}

/// What the vault on the server must still be for a replace to go ahead.
enum RemoteExpectation {
    /// No file yet.
    case absent
    /// The version with this tag (when the server has tags) and these bytes' SHA-256.
    case version(tag: String?, sha256: String)
}

/// What a replace did.
enum RemoteReplace {
    /// Written.
    case stored
    /// The vault was no longer what was expected (someone else wrote): nothing of theirs overwritten.
    /// `displaced` holds another writer's version that could not be put back in place, to be merged.
    case lostRace(displaced: Data?)
}

/// Why a remote cannot be used, in terms of what the user can do.
public enum RemoteFailure: Error, CustomStringConvertible, Sendable {
    /// No connection, a time-out, a DNS failure: the remote was not reached.
    case unreachable(url: String, detail: String)
    /// The HTTP server answered with an error status.
    case refused(url: String, status: Int)
    /// The SSH server refused the login or an operation.
    case denied(url: String, detail: String)
    /// The SSH server's host key is not in the known-hosts file.
    case unknownHostKey(url: String, fingerprint: String, knownHosts: String)
    /// The SSH server's host key differs from the one the known-hosts file holds for it.
    case changedHostKey(url: String, fingerprint: String, knownHosts: String)
    /// The server sent more than the download limit: stopped, nothing kept.
    case tooLarge(url: String, limit: Int64)
    /// The server's version asks for a key derivation far costlier than this vault's own.
    case tooCostly(url: String, detail: String)
    /// The server stopped sending (or never answered) within the time allowed.
    case stalled(url: String, detail: String)
    /// The transfer was stopped on request (a signal ending `sync --watch`).
    case cancelled(url: String)
    /// A netrc, key or known-hosts file that is not a regular file, or too large to be one.
    case unusableFile(path: String, reason: String)
    /// A URL this tool does not talk to.
    case unsupportedURL(String)
    /// The URL holds credentials (a WebDAV user or password, an SFTP password): not used, not logged.
    case credentialsInURL(sftp: Bool)

    public var description: String {
        switch self {
        case .unreachable(let url, let detail): "\(url): the server was not reached (\(detail))"
        case .refused(let url, let status): "\(url): \(Self.explain(status))"
        case .denied(let url, let detail): "\(url): \(detail)"
        case .unknownHostKey(let url, let fingerprint, let knownHosts):
            "\(url): the server's host key is not known (\(fingerprint)); not connected. If this is the server's key, add it to "
                + "\(knownHosts) (for example by connecting once with ssh and checking the fingerprint)"
        case .changedHostKey(let url, let fingerprint, let knownHosts):
            "\(url): the server's host key (\(fingerprint)) is NOT the one \(knownHosts) holds for it: someone may be "
                + "impersonating the server, or its key was replaced; not connected"
        case .tooLarge(let url, let limit):
            "\(url): the server sent more than \(limit) bytes (eight times this vault's size, at least 16 MiB): not a version "
                + "of this vault; stopped, nothing kept"
        case .tooCostly(let url, let detail):
            "\(url): the server's version asks for a key derivation far costlier than this vault's own (\(detail)): refused "
                + "before deriving, nothing changed"
        case .stalled(let url, let detail): "\(url): the server stopped sending (\(detail)); nothing was changed"
        case .cancelled(let url): "\(url): stopped on request; nothing was changed"
        case .unusableFile(let path, let reason): "\(path): \(reason); not used"
        case .unsupportedURL(let reason): reason
        case .credentialsInURL(let sftp):
            sftp ? "the remote URL holds a password: SFTP logs in with SSH keys" : "the remote URL holds credentials (user@ or user:password@)"
        }
    }

    static func explain(_ status: Int) -> String {
        switch status {
        case 401: "401 Unauthorized: the server wants credentials"
        case 403: "403 Forbidden: the server's account may not read or write there"
        case 404: "404 Not Found: no such file or folder on the server"
        case 405: "405 Method Not Allowed: this URL does not accept WebDAV requests"
        case 409: "409 Conflict: the folder of the vault does not exist on the server"
        case 423: "423 Locked: another client holds a WebDAV lock on the vault"
        case 507: "507 Insufficient Storage: the server's space is full; nothing was written"
        default: "the server answered HTTP \(status)"
        }
    }
}

/// The remote a URL names: `https://` (or `http://` to this machine) is WebDAV, `sftp://` is SFTP.
public struct RemoteOptions: Sendable {
    /// Server credentials for WebDAV (nil: `~/.netrc`).
    public var netrcFile: String?
    /// The SSH private key for SFTP (nil: ssh-agent, then `~/.ssh/id_ed25519`, `id_ecdsa`, `id_rsa`).
    public var identityFile: String?
    /// The known-hosts file for SFTP (nil: `~/.ssh/known_hosts`).
    public var knownHostsFile: String?
    /// Stops the remote's transfers from another thread (nil: they run to their end or time-out).
    public var cancellation: TransferCancellation?

    public init(netrcFile: String? = nil, identityFile: String? = nil, knownHostsFile: String? = nil,
                cancellation: TransferCancellation? = nil) {
        self.netrcFile = netrcFile
        self.identityFile = identityFile
        self.knownHostsFile = knownHostsFile
        self.cancellation = cancellation
    }
}

extension RemoteOptions {
    /// The largest netrc, SSH key or known-hosts file used: libcurl reads them itself, so a FIFO
    /// there would block a sync forever and `/dev/zero` would spin it.
    static let maximumFileSize: Int64 = 1 << 20

    /// Each file given, and each default one that exists (`~/.netrc`, `~/.ssh/known_hosts`), must be
    /// a regular file (symlinks followed) of at most 1 MiB.
    func checkFiles() throws(RemoteFailure) {
        let home = FileManager.default.homeDirectoryForCurrentUser.path
        let given = [netrcFile, identityFile, knownHostsFile].compactMap { $0 }
        let defaults = [home + "/.netrc", home + "/.ssh/known_hosts"].filter { FileManager.default.fileExists(atPath: $0) }
        for path in given + defaults {
            var status = stat()
            guard stat(path, &status) == 0 else { throw .unusableFile(path: path, reason: String(cString: strerror(errno))) }
            guard status.st_mode & S_IFMT == S_IFREG else { throw .unusableFile(path: path, reason: "not a regular file") }
            guard Int64(status.st_size) <= Self.maximumFileSize else {
                throw .unusableFile(path: path, reason: "larger than \(Self.maximumFileSize) bytes, not a netrc, key or known-hosts file")
            }
        }
    }
}

/// A remote vault named by URL, ready for `RemoteSync.run`.
public struct RemoteTarget: Sendable {
    var vault: any RemoteVault

    /// The URL it was made from.
    public var url: String { vault.url }

    /// Checks `url` (no credentials in it, a file path, a scheme this tool speaks) and the option's
    /// files without connecting.
    public init(url: String, options: RemoteOptions = RemoteOptions()) throws(RemoteFailure) {
        try options.checkFiles()
        if url.lowercased().hasPrefix("sftp://") {
            vault = try SFTPRemote(url: url, identityFile: options.identityFile, knownHostsFile: options.knownHostsFile,
                                   cancellation: options.cancellation)
        } else {
            vault = try WebDAVRemote(url: url, netrcFile: options.netrcFile, cancellation: options.cancellation)
        }
    }
}

extension RemoteFailure: RemediableFailure {
    /// Credentials go in a netrc file, SFTP logs in with a key.
    public var remedy: Remedy? {
        switch self {
        case .refused(_, 401): .serverCredentialsInNetrc
        case .credentialsInURL(let sftp): sftp ? .sshKeyLogin : .serverCredentialsInNetrc
        default: nil
        }
    }
}

extension RemoteFailure: ClassifiedFailure {
    /// A URL this tool cannot use is a wrong request; an unknown or changed host key is refused for
    /// safety; a server not reached, refusing or denying is an I/O failure.
    public var failureKind: FailureKind {
        switch self {
        case .unsupportedURL, .credentialsInURL: .invalidRequest
        case .unknownHostKey, .changedHostKey, .tooLarge, .tooCostly: .refusedForSafety
        case .unreachable, .refused, .denied, .stalled, .cancelled, .unusableFile: .ioError
        }
    }
}

extension RemoteSync.Refusal: ClassifiedFailure {
    /// A sync that would not write without a trustworthy compare-and-swap is refused for safety.
    public var failureKind: FailureKind { .refusedForSafety }
}

public import Foundation
public import SyncFiles
public import KDBXFormat
public import MyPassCore
internal import MyPassCrypto

/// A shared group's container file (KeeShare): foreign input read through the one door for outside
/// versions (`ForeignVersion`, within a budget measured against the version last exchanged), and a
/// write target written only as a regular `.kdbx` file, never through a link, by the durable
/// compare-and-swap and the verified encoding every vault write uses.
public struct ContainerFile: Sendable {
    /// The container's path (resolved against the vault's folder).
    public let path: String
    /// The file system it is on.
    public let fileSystem: FileSystem

    /// Why a container is not read or written (never its password or content).
    public enum Refusal: Error, Equatable, Sendable, CustomStringConvertible {
        /// KeePassXC's signed container (`.kdbx.share`, a zip with a signature) is not supported.
        case signedContainer
        /// Only a `.kdbx` file is a container this tool reads or writes.
        case notKDBXName
        /// A symlink (or anything but a regular file) is at the container's path.
        case notARegularFile
        /// The container does not open with the reference's password, or is not a KDBX file.
        case doesNotOpen(String)
        /// Beyond the budget for outside versions.
        case overBudget(String)
        /// The container changed while it was being written, again and again.
        case keepsChanging
        /// The vault's time for versions from elsewhere that fail to open is spent for now: read later.
        case deferred

        public var description: String {
            switch self {
            case .signedContainer: "a signed KeeShare container (.kdbx.share) is not supported; share with a .kdbx container"
            case .notKDBXName: "a container must be a .kdbx file"
            case .notARegularFile: "the container's path is a link or not a regular file; nothing is read or written through it"
            case .doesNotOpen(let why): "the container does not open: \(why)"
            case .overBudget(let why): "the container is refused: \(why)"
            case .keepsChanging: "the container kept changing while it was written"
            case .deferred: "the time for opening versions from elsewhere is spent for now; the container waits"
            }
        }
    }

    /// A container read: its bytes, their fingerprint and what they hold.
    public struct Read: Sendable {
        public let bytes: Data
        public let fingerprint: Fingerprint
        public let opened: OpenedVault
    }

    /// The container at `path` (already resolved) on `fileSystem`; refuses a name that is not `.kdbx`.
    public init(path: String, on fileSystem: FileSystem) throws(Refusal) {
        let lowered = path.lowercased()
        if lowered.hasSuffix(".share") { throw .signedContainer }
        guard lowered.hasSuffix(".kdbx") else { throw .notKDBXName }
        self.path = path
        self.fileSystem = fileSystem
    }

    /// The container as it is now (nil when there is none), opened with `password` within `budget`.
    public func read(password: ProtectedValue, budget: ForeignVersionBudget) throws(Refusal) -> Read? {
        let bytes: Data, fingerprint: Fingerprint
        do {
            (bytes, fingerprint) = try ForeignVersion.read(atPath: path, on: fileSystem, followSymlinks: false, budget: budget)
        } catch .notFound {
            return nil
        } catch .tooLarge(let detail) {
            throw .overBudget("larger than \(detail)")
        } catch {
            if isLinkOrSpecial() { throw .notARegularFile }
            throw .doesNotOpen(error.description)
        }
        do {
            let key = try Self.key(password)
            let opened = try ForeignVersion.open(bytes, key: key, cachedKey: nil, budget: budget)
            return Read(bytes: bytes, fingerprint: fingerprint, opened: opened)
        } catch ForeignVersion.Refusal.deferred {
            throw .deferred
        } catch let error as KDBXError {
            if case .resourceCapExceeded = error { throw .overBudget(error.description) }
            throw .doesNotOpen(error.description)
        } catch {
            throw .doesNotOpen(String(describing: error))
        }
    }

    /// The container's conflict copies beside it (the names sync engines give them), oldest name first.
    public func conflictCopies(naming: ConflictCopies.Naming) -> [String] {
        guard let (directory, name) = try? DirectoryHandle.parent(of: path, on: fileSystem) else { return [] }
        return directory.names().filter { ConflictCopies.engine(ofName: $0, forVaultNamed: name, naming: naming) != nil }
            .map { PathText.joining(PathText.folder(of: path), $0) }
    }

    /// `bytes` opened with `password` (a version kept in the state), nil when they do not open.
    public static func open(_ bytes: Data, password: ProtectedValue, budget: ForeignVersionBudget) -> OpenedVault? {
        guard let key = try? key(password) else { return nil }
        return try? ForeignVersion.open(bytes, key: key, cachedKey: nil, budget: budget)
    }

    /// Writes `container` with `password` in `settings`, only over the version `expected` (nil: only
    /// where there is no file); returns the bytes written and their fingerprint.
    public func write(_ container: Vault, password: ProtectedValue, settings: FormatSettings, expected: Fingerprint?) throws
        -> (bytes: Data, fingerprint: Fingerprint) {
        if isLinkOrSpecial() { throw Refusal.notARegularFile }
        let (bytes, _) = try VerifiedEncoding.encode(container, settings: settings, key: try Self.key(password), cachedKey: nil, limits: .standard)
        let fingerprint = try DurableFile.replace(atPath: path, on: fileSystem, with: bytes, policy: .onlyIf(expected), symlinks: .replaceLink)
        return (bytes, fingerprint)
    }

    /// The bytes of `container` with `password` in `settings`, verified (a version kept in the state).
    public func encode(_ container: Vault, password: ProtectedValue, settings: FormatSettings) throws -> Data {
        try VerifiedEncoding.encode(container, settings: settings, key: try Self.key(password), cachedKey: nil, limits: .standard).bytes
    }

    /// The format of a container this device writes first: KDBX 4, AES-256, Argon2d at 64 MiB, two
    /// iterations and two lanes (the password is the sharer's to choose; opening stays quick on a phone).
    public static func newContainerSettings() throws -> FormatSettings {
        let argon = KDFParameters.Argon2Settings(variant: .argon2d, salt: Data(count: 32), iterations: 2, memoryBytes: 64 << 20, parallelism: 2)
        return FormatSettings(version: .v4_0, cipher: .aes256, kdf: try KDFParameters.argon2(argon).withFreshSalt(), compression: .gzip)
    }

    private static func key(_ password: ProtectedValue) throws -> CompositeKey {
        try password.withRevealedBytes { bytes throws -> CompositeKey in
            try CompositeKey(password: SecureBytes(bytes: bytes), keyFileContents: nil)
        }
    }

    /// Whether something other than a regular file (a symlink, a FIFO, a directory) is at the path.
    private func isLinkOrSpecial() -> Bool {
        guard let status = SystemCalls.status(atPath: path, on: fileSystem) else { return false }
        return !status.isRegularFile
    }
}

extension ContainerFile.Refusal: ClassifiedFailure {
    /// A name that is no container: the request (exit 2); a container that does not open: wrong
    /// credentials (exit 3); a link, a budget or a container that keeps changing: refused for safety.
    public var failureKind: FailureKind {
        switch self {
        case .signedContainer, .notKDBXName: .invalidRequest
        case .doesNotOpen: .wrongCredentials
        case .notARegularFile, .overBudget, .keepsChanging, .deferred: .refusedForSafety
        }
    }
}

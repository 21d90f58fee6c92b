public import Foundation
public import SyncFiles
public import KDBXFormat
public import MyPassCore

/// The one step through which every version of a vault that did not come from this device is read
/// and opened: a conflict copy, a version a sync engine renamed aside (a rebuild candidate, the
/// rollback evidence), a merge input (a copy, `--base`, Unison's and git's files), the server's
/// version, a git blob for textconv. Read as a regular file (never through a symlink where it lies
/// in a synced folder) within the budget's size, opened within its KDF caps (checked before any
/// derivation), and, when an identity is expected, refused if it is another database.
public enum ForeignVersion {
    /// Why a version from elsewhere was not taken.
    public enum Refusal: String, Error, Sendable, Codable, CaseIterable, CustomStringConvertible {
        /// It does not open with the vault's credentials.
        case otherCredentials
        /// It opens, but is another database (its root group differs).
        case otherDatabase
        /// Not a readable vault (damaged, half written, not a regular file, a symlink).
        case unreadable
        /// Larger than the budget's size: not read.
        case tooLarge
        /// Its KDF (or payload) is beyond the budget: refused before any derivation.
        case tooCostly
        /// The vault's allowance for opening versions from elsewhere is spent for now
        /// (`ForeignWorkAllowance`): not opened yet, tried again once there is room.
        case deferred

        /// The refusal of `error` from reading or opening a version.
        public init(_ error: any Error) {
            switch error {
            case let refusal as Refusal: self = refusal
            case KDBXError.wrongCredentials: self = .otherCredentials
            case KDBXError.resourceCapExceeded: self = .tooCostly
            case FileError.tooLarge: self = .tooLarge
            default: self = .unreadable
            }
        }

        public var description: String {
            switch self {
            case .otherCredentials: "it does not open with the vault's credentials"
            case .otherDatabase: "it is another database"
            case .unreadable: "it is not a readable vault"
            case .tooLarge: "it is far larger than the vault"
            case .tooCostly: "its key derivation is far costlier than the vault's"
            case .deferred: "the time for opening copies from elsewhere is spent for now; it waits"
            }
        }
    }

    /// A copy beside the vault, read and opened.
    public struct OpenedCopy: Sendable {
        /// The bytes read.
        public let bytes: Data
        /// Their fingerprint (content and inode) when read.
        public let fingerprint: Fingerprint
        /// The version they open to.
        public let opened: OpenedVault
    }

    /// What became of opening a copy.
    public enum CopyOpening: Sendable {
        case opened(OpenedCopy)
        /// Refused, for a reason the watcher remembers until the copy changes.
        case refused(Refusal)
        /// Not there any more (the next listing shows it).
        case gone
    }

    /// The one step that opens a conflict copy or a version a sync engine renamed aside, for every
    /// path that uses one (folding, the rebuild, the rollback evidence): the regular file `name` in
    /// `folder` (never through a symlink) read within `budget`, opened within its caps — or taken
    /// from `prefetched`, when it opened exactly those bytes ahead — and checked to be `identity`.
    public static func openCopy(
        _ name: String, in folder: DirectoryHandle, key: CompositeKey, cachedKey: DerivedKey?, budget: ForeignVersionBudget,
        identity: DatabaseIdentity?, prefetched: ((Fingerprint) -> Result<OpenedVault, Refusal>?)? = nil
    ) -> CopyOpening {
        do {
            let read = try read(name, in: folder, budget: budget)
            let opened = try prefetched?(read.fingerprint)?.get()
                ?? open(read.bytes, key: key, cachedKey: cachedKey, budget: budget, identity: identity)
            return .opened(OpenedCopy(bytes: read.bytes, fingerprint: read.fingerprint, opened: opened))
        } catch FileError.notFound {
            return .gone
        } catch {
            return .refused(Refusal(error))
        }
    }

    /// `openCopy` of the file at `path`, in the folder that holds it.
    public static func openCopy(
        atPath path: String, on fileSystem: FileSystem, key: CompositeKey, cachedKey: DerivedKey?, budget: ForeignVersionBudget,
        identity: DatabaseIdentity?
    ) -> CopyOpening {
        do {
            let (folder, name) = try DirectoryHandle.parent(of: path, on: fileSystem)
            return openCopy(name, in: folder, key: key, cachedKey: cachedKey, budget: budget, identity: identity)
        } catch .notFound {
            return .gone
        } catch {
            return .refused(.unreadable)
        }
    }

    /// The bytes of the regular file `name` in `folder` (never through a symlink), within `budget`.
    public static func read(_ name: String, in folder: DirectoryHandle, budget: ForeignVersionBudget) throws(FileError)
        -> (bytes: Data, fingerprint: Fingerprint) {
        try DurableFile.read(name, in: folder, limit: budget.sizeLimit)
    }

    /// The bytes of the file at `path` within `budget`; a symlink is followed only when
    /// `followSymlinks` (a file the user named, not one found in a synced folder).
    public static func read(atPath path: String, on fileSystem: FileSystem, followSymlinks: Bool, budget: ForeignVersionBudget) throws(FileError)
        -> (bytes: Data, fingerprint: Fingerprint) {
        try DurableFile.read(atPath: path, on: fileSystem, followSymlinks: followSymlinks, limit: budget.sizeLimit)
    }

    /// `bytes` opened with `key` within `budget` (no derivation when `cachedKey` fits its KDF); when
    /// `identity` is given, a version of another database is refused (`Refusal.otherDatabase`).
    /// What it holds unchanged from `sharingStorageWith` (the vault in memory) takes its storage.
    public static func open(
        _ bytes: Data, key: CompositeKey, cachedKey: DerivedKey?, budget: ForeignVersionBudget, identity: DatabaseIdentity? = nil,
        sharingStorageWith donor: Vault? = nil
    ) throws -> OpenedVault {
        guard let allowance = budget.allowance else {
            return try open(bytes, key: key, cachedKey: cachedKey, limits: budget.limits, identity: identity, donor: donor)
        }
        // Only what fails to open counts: a version that opens was made with the vault's key (its
        // cost is a device's to choose); junk planted without the key never opens.
        return try allowance.whenAdmitted { try open(bytes, key: key, cachedKey: cachedKey, limits: budget.limits, identity: identity, donor: donor) }
    }

    private static func open(
        _ bytes: Data, key: CompositeKey, cachedKey: DerivedKey?, limits: ResourceLimits, identity: DatabaseIdentity?, donor: Vault?
    ) throws -> OpenedVault {
        let opened = try KDBXReader.open(bytes, key: key, cachedKey: cachedKey, limits: limits, sharingStorageWith: donor)
        if let identity, DatabaseIdentity(opened.vault) != identity { throw Refusal.otherDatabase }
        return opened
    }

    /// `open`, its failure told as the refusal it is.
    public static func opening(
        _ bytes: Data, key: CompositeKey, cachedKey: DerivedKey?, budget: ForeignVersionBudget, identity: DatabaseIdentity? = nil
    ) -> Result<OpenedVault, Refusal> {
        do {
            return .success(try open(bytes, key: key, cachedKey: cachedKey, budget: budget, identity: identity))
        } catch {
            return .failure(Refusal(error))
        }
    }

    /// Several versions opened at once (one per core), each with its own key, within `budget`; what
    /// they hold unchanged from `sharingStorageWith` (the vault they are merged into) takes its storage.
    public static func open(
        _ versions: [(bytes: Data, key: CompositeKey)], cachedKey: DerivedKey?, budget: ForeignVersionBudget,
        sharingStorageWith donor: Vault? = nil
    ) -> [Result<OpenedVault, KDBXError>] {
        KDBXReader.open(files: versions.map { ($0.bytes, $0.key) }, cachedKey: cachedKey, limits: budget.limits, sharingStorageWith: donor)
    }
}

public import Foundation
internal import SyncFiles
public import SyncCommit
public import MyPassCrypto
public import KDBXFormat
internal import MyPassCore

/// Vault passwords in the desktop keyring (Secret Service), found again by database identity under
/// any name the database turns up as: the vault, its conflict copies, a merge driver's temporary
/// files. An item holds the password, the identity (`DatabaseIdentity`), the path it was stored for
/// and the key file's path (never the key file's bytes), labelled `mypass-sync: NAME (database NAME)`.
public enum DesktopKeyring {
    /// The most stored passwords tried on one file (each try is one key derivation): the identity
    /// is in the encrypted part, so a candidate is known to fit only once it opened the file.
    public static let maximumCandidates = 8

    /// A stored item as `keyring list` shows it (no secret).
    public struct Entry: Sendable, Encodable {
        public let label: String
        public let path: String?
        public let keyFile: String?
        public let databaseName: String?
        public let identity: String?
    }

    /// How a lookup chose its item, for `--verbose`.
    public struct Match: Sendable, CustomStringConvertible {
        public let label: String
        /// Whether the item was stored for this very path (else another name of the same database).
        public let samePath: Bool
        public let identity: DatabaseIdentity
        /// Stored passwords tried before this one.
        public let tried: Int

        public var description: String {
            "keyring item '\(label)': " + (samePath ? "stored for this path" : "stored for another name of the same database")
                + ", database identity (\(identity)) matched; \(tried) other item(s) tried first"
        }
    }

    /// Why the keyring gave no credentials.
    public enum Failure: Error, CustomStringConvertible, Sendable {
        /// No session bus, no Secret Service, or its collection stayed locked.
        case unavailable(String)
        /// No stored password opens this file as the database it was stored for.
        case notFound(path: String, tried: Int)
        /// Two stored items match this file's database (two databases made from one template).
        case ambiguous(path: String, labels: [String])
        /// Storing would replace the password kept for another file of the same database identity.
        case wouldReplace(path: String, storedFor: String)

        public var description: String {
            switch self {
            case .unavailable(let detail): "the desktop keyring (Secret Service) cannot be used: \(detail)"
            case .notFound(let path, let tried):
                "no password for \(path) in the desktop keyring (\(tried) stored item(s) tried); store one with "
                    + "`mypass-sync keyring store \(path)`"
            case .ambiguous(let path, let labels):
                "\(path): more than one keyring item matches this database (\(labels.joined(separator: "; "))): two databases "
                    + "made from one template share their identity; `mypass-sync keyring forget` the wrong one"
            case .wouldReplace(let path, let storedFor):
                "\(path) carries the database identity of \(storedFor), whose keyring item holds another password; not replaced "
                    + "(that vault would no longer open from the keyring): `keyring store --replace` if \(path) is that vault now"
            }
        }
    }

    private static let application = "mypass-sync"

    /// Stores `password` (already checked to open `unlocked`) for its database, replacing an item
    /// stored for this path or with the same password for another name of the same database; an item
    /// of another file with that identity and another password is replaced only when `replacing`
    /// (a file can carry any database's identity). `keyFilePath` is remembered as a path.
    public static func store(_ password: SecureBytes, for unlocked: UnlockedVault, keyFilePath: String?, replacing: Bool = false) throws(Failure) {
        let identity = DatabaseIdentity(unlocked.vault)
        let path = DurableFile.resolvedPath(unlocked.file.path, on: unlocked.file.fileSystem)
        let databaseName = unlocked.vault.meta.databaseName
        let existing: [SecretService.Item]
        do {
            existing = try SecretService.search(identityAttributes(identity), loadingSecrets: true)
        } catch {
            throw .unavailable(error.description)
        }
        if !replacing, let other = existing.first(where: { $0.attributes["path"] != path && $0.secret != password }) {
            throw .wouldReplace(path: path, storedFor: other.attributes["path"] ?? other.label)
        }
        do {
            _ = try SecretService.clear(identityAttributes(identity))
            var attributes = identityAttributes(identity)
            attributes["path"] = path
            attributes["database-name"] = databaseName
            if let keyFilePath { attributes["key-file"] = DurableFile.resolvedPath(keyFilePath, on: .real) }
            let name = (path as NSString).lastPathComponent
            try SecretService.store(password, label: "mypass-sync: \(name) (database \(databaseName.isEmpty ? "unnamed" : databaseName))",
                                    attributes: attributes)
        } catch {
            throw .unavailable(error.description)
        }
    }

    /// Removes the items stored for `path` and, when `identity` is given, for its database; how many.
    public static func forget(path: String, identity: DatabaseIdentity?) throws(Failure) -> Int {
        do {
            let stored = try SecretService.search(["application": application], loadingSecrets: false)
            let resolved = DurableFile.resolvedPath(path, on: .real)
            let matching = stored.filter { item in
                item.attributes["path"] == resolved || (identity != nil && Self.identity(of: item) == identity)
            }
            var removed = 0
            for item in matching {
                var attributes = ["application": application]
                for name in ["database-root", "database-created", "path"] { attributes[name] = item.attributes[name] }
                if try SecretService.clear(attributes) { removed += 1 }
            }
            return removed
        } catch {
            throw .unavailable(error.description)
        }
    }

    /// Every item of this tool (labels and attributes, no secrets).
    public static func list() throws(Failure) -> [Entry] {
        do {
            return try SecretService.search(["application": application], loadingSecrets: false).map { item in
                Entry(label: item.label, path: item.attributes["path"], keyFile: item.attributes["key-file"],
                      databaseName: item.attributes["database-name"], identity: identity(of: item)?.description)
            }.sorted { $0.label < $1.label }
        } catch {
            throw .unavailable(error.description)
        }
    }

    /// `file` opened with the stored password of its database: items stored for this path first,
    /// then those for the same file name's stem (a conflict copy, a renamed version), then the rest,
    /// at most `candidates` (and `maximumCandidates`) derivations. A password that opens the file counts only when the
    /// database is the one it was stored for; `keyFile` (the bytes given) overrides the item's key file.
    /// Returns the stored password too (a shared group's reference carries its container's).
    public static func unlock(
        _ file: VaultFile, keyFile: Data?, challengeResponse: (any ChallengeResponse)? = nil, candidates: Int = maximumCandidates
    ) throws -> (vault: UnlockedVault, credentials: VaultCredentials, match: Match, password: SecureBytes) {
        let stored: [SecretService.Item]
        do {
            stored = try SecretService.search(["application": application], loadingSecrets: true)
        } catch {
            throw Failure.unavailable(error.description)
        }
        let path = DurableFile.resolvedPath(file.path, on: file.fileSystem)
        let stem = Self.stem(of: path)
        let ordered = stored.filter { $0.attributes["path"] == path }
            + stored.filter { $0.attributes["path"] != path && $0.attributes["path"].map(Self.stem(of:)) == stem }
            + stored.filter { $0.attributes["path"] != path && $0.attributes["path"].map(Self.stem(of:)) != stem }
        var tried = 0
        for item in ordered.prefix(min(candidates, maximumCandidates)) {
            guard let secret = item.secret, let expected = identity(of: item) else { continue }
            let itemKeyFile = try keyFile ?? item.attributes["key-file"].map { try FileReading.readAll(atPath: $0, on: .real) }
            let plain = try VaultCredentials(password: secret, keyFile: itemKeyFile)
            let credentials = challengeResponse.map(plain.adding) ?? plain
            tried += 1
            let unlocked: UnlockedVault
            do {
                unlocked = try file.unlock(credentials)
            } catch KDBXError.wrongCredentials {
                continue
            }
            let identity = DatabaseIdentity(unlocked.vault)
            guard identity == expected else { continue }  // the same password, another database
            let twins = stored.filter { Self.identity(of: $0) == identity }
            guard twins.count == 1 else { throw Failure.ambiguous(path: file.path, labels: twins.map(\.label)) }
            let match = Match(label: item.label, samePath: item.attributes["path"] == path, identity: identity, tried: tried - 1)
            return (unlocked, credentials, match, secret)
        }
        throw Failure.notFound(path: file.path, tried: tried)
    }

    private static func identityAttributes(_ identity: DatabaseIdentity) -> [String: String] {
        ["application": application, "database-root": identity.rootGroup.uuidString, "database-created": identity.created.iso8601]
    }

    private static func identity(of item: SecretService.Item) -> DatabaseIdentity? {
        guard let root = item.attributes["database-root"], let created = item.attributes["database-created"] else { return nil }
        return DatabaseIdentity(rootGroup: root, created: created)
    }

    /// `vault` of `/x/vault.sync-conflict-….kdbx`, `vault (conflict …).kdbx`, `vault.kdbx..path1`.
    static func stem(of path: String) -> String {
        let name = (path as NSString).lastPathComponent
        return String(name.prefix { $0 != "." && $0 != " " })
    }
}

extension DesktopKeyring.Failure: ClassifiedFailure {
    /// No password found or none usable: wrong credentials (exit 3); two matching items: a request
    /// to resolve (exit 2).
    public var failureKind: FailureKind {
        switch self {
        case .unavailable, .notFound: .wrongCredentials
        case .ambiguous, .wouldReplace: .invalidRequest
        }
    }
}

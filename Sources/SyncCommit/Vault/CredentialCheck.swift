internal import Foundation
public import SyncFiles
public import SyncState
public import KDBXFormat

/// The file a watcher or the daemon checks a vault's credentials on when it starts, read under the
/// rule for it (`VaultFile.readForCredentialCheck`), and the budget it is held to.
public struct CredentialCheckFile: Sendable {
    /// The version read; its `limits` are the caps every derivation of the check stays within.
    public let file: VaultFile
    /// The budget the version is held to; nil when the vault's own limits apply.
    public let budget: ForeignVersionBudget?

    /// How many different keys (keyring candidates) the check may derive: as many as fit the budget,
    /// at most `maximum`.
    public func derivations(atMost maximum: Int) -> Int {
        budget.map { file.derivations(within: $0, atMost: maximum) } ?? maximum
    }
}

extension VaultFile {
    /// The version of the vault at `vaultPath` that its credentials are checked on when a watcher or
    /// the daemon (re)starts, read once before any password is asked for or derived.
    ///
    /// `standIn` is the file that stands for the vault (`VaultWatcher.standIn`): the vault itself,
    /// or while it is missing a copy a sync engine renamed aside. The budget is the one for versions
    /// from elsewhere (`ForeignVersionBudget`), measured against the version this device synced
    /// (its base in `state`), else `withoutReference`:
    /// - a stand-in is a version from elsewhere: held to the budget (size, KDF, payload), never read
    ///   through a symlink;
    /// - the vault, when this device has a base: read only up to the budget's size; its KDF is
    ///   checked against the budget when its costs (function, memory, iterations, parallelism,
    ///   rounds) differ from the base's, since anyone who can write the folder can edit the header
    ///   without the password; a new salt alone is an ordinary save and keeps `limits`;
    /// - the vault, with no base (first use on this device): `limits`, the vault the user chose.
    /// A refusal is a `CredentialCheckRefusal`, thrown before anything is derived.
    public static func readForCredentialCheck(
        vault vaultPath: String, standIn: String, state: SyncStateStore, limits: ResourceLimits, on fileSystem: FileSystem
    ) throws -> CredentialCheckFile {
        let base = state.base(for: vaultPath)?.bytes
        let budget = ForeignVersionBudget(measuredAgainst: base, within: limits)
        if standIn != vaultPath {
            do {
                let file = try read(standIn, on: fileSystem, within: budget, followSymlinks: false)
                return CredentialCheckFile(file: file, budget: budget)
            } catch {
                throw CredentialCheckRefusal(refusing: error, path: standIn, standingInFor: vaultPath, budget: budget) ?? error
            }
        }
        guard let base, let baseKDF = try? KDBXReader.header(of: base).kdf else {
            return CredentialCheckFile(file: try read(vaultPath, on: fileSystem, limits: limits), budget: nil)
        }
        let bytes: Data, fingerprint: Fingerprint, header: OuterHeader
        do {
            (bytes, fingerprint) = try DurableFile.read(atPath: vaultPath, on: fileSystem, limit: budget.sizeLimit)
            header = try KDBXReader.header(of: bytes)
            if header.kdf.costs(sameAs: baseKDF) {
                try header.kdf.check(against: limits)
                return CredentialCheckFile(file: VaultFile(path: vaultPath, fingerprint: fingerprint, bytes: bytes, header: header,
                                                           limits: limits, fileSystem: fileSystem), budget: nil)
            }
            try header.kdf.check(against: budget.limits)
        } catch {
            throw CredentialCheckRefusal(refusing: error, path: vaultPath, standingInFor: nil, budget: budget) ?? error
        }
        return CredentialCheckFile(file: VaultFile(path: vaultPath, fingerprint: fingerprint, bytes: bytes, header: header,
                                                   limits: budget.limits, fileSystem: fileSystem), budget: budget)
    }
}

extension KDFParameters {
    /// Whether a derivation with these settings costs what one with `other` costs: the same function
    /// and settings, whatever the salt (every save draws a new one).
    func costs(sameAs other: KDFParameters) -> Bool {
        switch (self, other) {
        case (.aesKDF(_, let rounds), .aesKDF(_, let otherRounds)):
            return rounds == otherRounds
        case (.argon2(var settings), .argon2(let otherSettings)):
            settings.salt = otherSettings.salt
            return settings == otherSettings
        default:
            return false
        }
    }
}

internal import Foundation
public import SyncFiles
public import SyncState

/// The sync-conflict copies of a vault, or of every vault in a folder: listed, listed as kept on this
/// device, or folded in (`conflicts`). The credentials are asked for once, when a vault has copies to
/// merge, and used for every vault of the folder; a vault of the folder they do not open, or a
/// symlink under a vault's name, is said and skipped.
public enum FolderCopies {
    /// What to do.
    public enum Action: Sendable {
        /// List the copies.
        case list
        /// List the copies this device merged and keeps (no credentials).
        case listMerged
        /// Fold the copies in (`dryRun`: merge in memory only).
        case merge(dryRun: Bool, keepsBackup: Bool)
    }

    /// What happened to one vault.
    public struct VaultReport: Sendable, Encodable {
        /// The vault.
        public let vault: String
        /// Its conflict copies found.
        public let copies: [ConflictCopies.Copy]
        /// What became of each copy (merging only).
        public let outcomes: [CopyFolding.Outcome]
        /// Whether the vault file was replaced by this run.
        public var wroteVault = false
        /// With `listMerged`: the copies this device keeps.
        public var merged: [RetiredCopies.Copy]?
        /// Why this vault of the folder was not merged.
        public var skipped: Skipped?
    }

    /// Why a vault found in a folder was left alone.
    public enum Skipped: String, Sendable, Encodable {
        /// It does not open with the credentials given (anyone who can write there can plant one).
        case otherCredentials
        /// A symlink or another non-regular file under a vault's name: planted, never followed.
        case notARegularFile

        /// The reason in words.
        public var explanation: String {
            switch self {
            case .otherCredentials: "it does not open with these credentials"
            case .notARegularFile: "a symlink or not a regular file (never followed)"
            }
        }
    }

    /// The JSON document of `conflicts --json` (schema 1).
    public struct Report: Sendable, Encodable {
        /// The version of this document's layout.
        public let schema = 1
        /// One report per vault.
        public let vaults: [VaultReport]
    }

    /// Does `action` for the vault at `target`, or for every vault in the folder `target`.
    /// `read` reads (and checks) a vault before `credentials` is asked for, once; `settings`: this
    /// device's settings (its copy names, backups, KDF salt rotation), read once by the caller.
    public static func run(
        _ action: Action, at target: String, state: SyncStateStore, settings: DeviceSettings, read: (String) throws -> VaultFile,
        credentials: (String) throws -> VaultCredentials
    ) throws -> Report {
        let naming = settings.copyNaming
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: target, isDirectory: &isDirectory) else {
            // A vault a sync engine renamed aside with the other version (rclone bisync) is gone while
            // its copies are there: they are listed (the watcher rebuilds the vault from them), and so
            // are the copies this device took out of its folder before.
            let copies = ConflictCopies.find(for: target, on: state.fileSystem, naming: naming)
            let folder = PathText.folder(of: target)
            switch action {
            case .list where !copies.isEmpty:
                return Report(vaults: [VaultReport(vault: target, copies: copies, outcomes: [])])
            case .listMerged where FileManager.default.fileExists(atPath: folder.isEmpty ? "." : folder):
                return Report(vaults: [VaultReport(vault: target, copies: copies, outcomes: [],
                                                   merged: RetiredCopies(state: state, vaultPath: target).list())])
            default:
                throw FileError.notFound(path: target)
            }
        }
        var vaults = [target]
        var reports: [VaultReport] = []
        if isDirectory.boolValue {
            let found = ConflictCopies.vaults(in: try DirectoryHandle(opening: target, on: state.fileSystem), naming: naming)
            vaults = found.filter(\.isRegularFile).map(\.path)
            // A symlink among the folder's vaults was planted (the user named the folder, not it): it
            // could lead a merge into a private vault elsewhere. Said, never followed.
            for planted in found where !planted.isRegularFile {
                reports.append(VaultReport(vault: planted.path, copies: [], outcomes: [], skipped: .notARegularFile))
            }
        }
        var given: VaultCredentials?
        for vault in vaults {
            let copies = ConflictCopies.find(for: vault, on: state.fileSystem, naming: naming)
            switch action {
            case .list:
                reports.append(VaultReport(vault: vault, copies: copies, outcomes: []))
            case .listMerged:
                reports.append(VaultReport(vault: vault, copies: copies, outcomes: [], merged: RetiredCopies(state: state, vaultPath: vault).list()))
            case .merge(let dryRun, let keepsBackup):
                guard !copies.isEmpty else {
                    reports.append(VaultReport(vault: vault, copies: copies, outcomes: []))
                    continue
                }
                let file = try read(vault)
                let vaultCredentials = try given ?? credentials(vault)
                given = vaultCredentials
                let unlocked: UnlockedVault
                do {
                    unlocked = try file.unlock(vaultCredentials)
                } catch where isDirectory.boolValue && FailureKind(of: error) == .wrongCredentials {
                    // Another vault of the folder with other credentials: said; the others are still handled.
                    reports.append(VaultReport(vault: vault, copies: copies, outcomes: [], skipped: .otherCredentials))
                    continue
                }
                let folded = try CopyFolding.fold(copies, into: unlocked, state: state, keepsBackup: keepsBackup,
                                                      settings: settings, dryRun: dryRun)
                reports.append(VaultReport(vault: vault, copies: copies, outcomes: folded.outcomes, wroteVault: folded.wroteVault))
            }
        }
        return Report(vaults: reports)
    }
}

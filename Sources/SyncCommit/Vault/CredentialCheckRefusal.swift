internal import SyncFiles
internal import KDBXFormat

/// Why the file a vault's credentials were to be checked on was refused before anything was read
/// whole or derived (`VaultFile.readForCredentialCheck`): it is far larger, or its key derivation far
/// costlier, than the budget measured against the version this device synced allows.
public struct CredentialCheckRefusal: Error, Sendable, CustomStringConvertible, ClassifiedFailure, RemediableFailure {
    /// What was beyond the budget.
    public enum Excess: Sendable, Equatable {
        /// The file's size, in bytes, above the budget's `limit`: not read.
        case size(Int64, limit: Int64)
        /// The KDF (or payload) cap exceeded, as the header check words it.
        case cost(String)
    }

    /// The file refused.
    public let path: String
    /// The missing vault it stood in for; nil when it is the vault itself.
    public let vaultPath: String?
    public let excess: Excess

    /// The refusal for `error` from reading or checking `path` within a budget; nil when `error`
    /// is not a budget being exceeded (a missing file, not a vault: thrown as it is).
    init?(refusing error: any Error, path: String, standingInFor vaultPath: String?, budget: ForeignVersionBudget) {
        switch error {
        case FileError.tooLarge(_, let size): excess = .size(size, limit: budget.sizeLimit)
        case KDBXError.resourceCapExceeded(let detail): excess = .cost(detail)
        default: return nil
        }
        self.path = path
        self.vaultPath = vaultPath
    }

    public var description: String {
        let what = vaultPath.map { "\(path), standing in for the missing \($0)," } ?? path
        switch excess {
        case .size(let size, let limit):
            return "\(what) was not read: it is \(size) bytes, above the \(limit) bytes allowed for a version read before its "
                + "credentials are checked; nothing was derived"
        case .cost(let detail):
            return vaultPath == nil
                ? "\(what): its key derivation settings changed since this device synced it and cost far more (\(detail)); "
                    + "nothing was derived"
                : "\(what): its key derivation costs more than a version from elsewhere may (\(detail)); nothing was derived"
        }
    }

    public var failureKind: FailureKind { .refusedForSafety }

    /// A vault that someone with the password made larger or costlier on purpose becomes this
    /// device's base once opened with its own limits; a stand-in has no such way in.
    public var remedy: Remedy? {
        vaultPath == nil ? .takeVaultAsBase : nil
    }
}

public import Foundation

/// Why the watcher does not open the vault file itself.
public enum VaultFileRefusal: Error, Sendable, CustomStringConvertible {
    /// Its key derivation changed since this device synced it and is beyond the budget for versions
    /// from elsewhere (someone with access to the folder can raise it without the password).
    case costlierKeyDerivation(String)
    /// Its header changed and deriving its key waits until the vault's allowance for versions that
    /// fail to open has room again (`until`).
    case allowanceSpent(until: Date)

    public var description: String {
        switch self {
        case .costlierKeyDerivation(let reason):
            "its key derivation changed since this device last synced it and is far costlier (\(reason)); not derived "
                + "(if you strengthened it yourself, open the vault once on this device, `mypass-sync ls VAULT`, to accept it)"
        case .allowanceSpent(let until):
            "its header changed and its key derivations failed until the vault's allowance was spent; derived again after "
                + ISO8601DateFormatter().string(from: until)
        }
    }
}

internal import Foundation
public import MyPassCore

/// The merged vault, what changed relative to the local vault, and warnings.
public struct MergeResult: Sendable {
    /// The merged vault.
    public var vault: Vault
    /// What changed relative to the local vault.
    public var changes: [Change]
    /// What the merge noticed without stopping.
    public var warnings: [String]
    /// How each property the sides differed on was decided (empty unless an explanation was asked for).
    public var decisions: [FieldDecision] = []

    /// Whether the merge changed anything in the local vault.
    public var hasChanges: Bool { !changes.isEmpty }
}

/// Why two vaults cannot be merged.
public enum MergeError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The root groups differ: these are different databases, not copies of one.
    case differentDatabases

    /// The refusal in one sentence.
    public var description: String {
        switch self {
        case .differentDatabases: "the vaults are different databases (their root groups differ); refusing to merge"
        }
    }
}

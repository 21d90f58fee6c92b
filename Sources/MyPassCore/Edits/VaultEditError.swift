public import Foundation

/// Why an edit could not be applied. Names objects by UUID, never by content.
public enum VaultEditError: Error, Equatable, Sendable, CustomStringConvertible {
    case entryNotFound(UUID)
    case groupNotFound(UUID)
    /// A group cannot move into itself or below itself.
    case groupIntoItself(UUID)
    /// The root group cannot be moved or deleted.
    case rootGroup
    /// A name, title or path was empty or otherwise unusable.
    case invalidName(String)
    /// A path-addressed edit would give two siblings one path (the path of the one that is there).
    case pathTaken(VaultPath)
    /// No group or entry at a path.
    case nothingAt(VaultPath)

    /// The failure in one sentence.
    public var description: String {
        switch self {
        case .entryNotFound(let uuid): "no entry \(uuid.canonicalString)"
        case .groupNotFound(let uuid): "no group \(uuid.canonicalString)"
        case .groupIntoItself(let uuid): "group \(uuid.canonicalString) cannot move into itself"
        case .rootGroup: "the root group cannot be moved or deleted"
        case .invalidName(let reason): reason
        case .pathTaken(let path): "\(path) exists already"
        case .nothingAt(let path): "nothing at \(path)"
        }
    }
}

public import Foundation

/// What a shared group does with its container (KeePassXC's KeeShare types).
public enum ShareMode: String, Sendable, CaseIterable, Codable {
    /// Shared but switched off: nothing is read or written.
    case inactive
    /// The container's content is merged into the group.
    case importing = "import"
    /// The group is written to the container.
    case exporting = "export"
    /// Both: merged in, then written out.
    case synchronizing = "synchronize"

    /// Whether this mode reads the container into the vault.
    public var imports: Bool { self == .importing || self == .synchronizing }
    /// Whether this mode writes the group to the container.
    public var exports: Bool { self == .exporting || self == .synchronizing }
}

/// A group's KeeShare reference, as KeePassXC keeps it in the group's custom data
/// (`KeeShare/Reference`): what to do, where the container is and its password. The password is
/// masked in memory and never part of `description`.
public struct ShareReference: Sendable, Equatable, CustomStringConvertible {
    /// The custom-data key of a group's reference.
    public static let customDataKey = "KeeShare/Reference"

    /// Import, export, both or neither.
    public var mode: ShareMode
    /// The reference's own identifier (KeePassXC makes a random one; it is not the group's).
    public var identifier: UUID
    /// The container's path as written: relative to the vault's folder, or absolute.
    public var containerPath: String
    /// The container's password.
    public var password: ProtectedValue

    /// A reference with these parts.
    public init(mode: ShareMode, identifier: UUID = UUID(), containerPath: String, password: ProtectedValue) {
        self.mode = mode
        self.identifier = identifier
        self.containerPath = containerPath
        self.password = password
    }

    /// The container's path resolved against the folder of the vault at `vaultPath` (`..` kept as written).
    public func resolvedContainerPath(vaultPath: String) -> String {
        if containerPath.hasPrefix("/") { return containerPath }
        guard let slash = vaultPath.lastIndex(of: "/") else { return containerPath }
        return String(vaultPath[...slash]) + containerPath
    }

    /// Whether the container is KeePassXC's signed kind (a zip, `.kdbx.share`), which is not supported.
    public var isSignedContainer: Bool { containerPath.lowercased().hasSuffix(".share") }

    public var description: String { "\(mode.rawValue) \(containerPath)" }
}

extension Group {
    /// The raw KeeShare reference this group carries (base64 text), if any.
    public var shareReferenceText: String? {
        customData.first { $0.key == ShareReference.customDataKey }?.value
    }
}

extension Vault {
    /// Every group carrying a KeeShare reference, in tree order, with its raw reference text.
    public var sharedGroups: [(group: Group, referenceText: String)] {
        var found: [(Group, String)] = []
        func visit(_ group: Group) {
            if let text = group.shareReferenceText { found.append((group, text)) }
            group.groups.forEach(visit)
        }
        visit(root)
        return found
    }
}

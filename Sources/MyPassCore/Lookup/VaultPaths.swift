public import Foundation

/// Entries and groups named by path, as keepassxc-cli spells them: `/Group/Sub/Title`, the leading
/// slash optional, `/` (or nothing) for the root group. The first group or entry of a name wins
/// where names repeat.
public struct VaultPath: Sendable, Hashable, CustomStringConvertible {
    /// The names from the root, without the root.
    public let components: [String]

    /// The path spelled `text`: names separated by `/`, where `\/` is a slash inside a name (a title
    /// such as `Work/Mail`) and `\\` a backslash — the spelling every command prints; any other
    /// backslash is itself.
    public init(_ text: String) {
        // By Unicode scalar, not by character: a slash or backslash followed by a combining mark is
        // still a separator or an escape (as `escaped` writes them).
        var components: [String] = []
        var name = String.UnicodeScalarView()
        var escaping = false
        for scalar in text.unicodeScalars {
            if escaping {
                // Only `\/` and `\\` are escapes: a backslash before anything else is itself (C:\Users).
                if scalar != "/" && scalar != "\\" { name.append("\\") }
                name.append(scalar)
                escaping = false
            } else if scalar == "\\" {
                escaping = true
            } else if scalar == "/" {
                if !name.isEmpty { components.append(String(name)) }
                name = String.UnicodeScalarView()
            } else {
                name.append(scalar)
            }
        }
        if escaping { name.append("\\") }
        if !name.isEmpty { components.append(String(name)) }
        self.components = components
    }

    /// Whether `text` ends in an unescaped `/` after a name (`/Internet/`): it names a group, never
    /// an entry.
    public static func endsWithSeparator(_ text: String) -> Bool {
        let scalars = text.unicodeScalars
        guard scalars.last == "/", scalars.count > 1 else { return false }
        let backslashes = scalars.dropLast().reversed().prefix { $0 == "\\" }.count
        return backslashes % 2 == 0
    }

    /// `name` as one component of a path: `/` written `\/`, `\` written `\\`.
    public static func escaped(_ name: String) -> String {
        // Most names hold neither (a listing of 10,000 entries escapes every one): a byte scan first.
        guard name.utf8.contains(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "\\") }) else { return name }
        var escaped = ""
        escaped.reserveCapacity(name.utf8.count + 4)
        for character in name.unicodeScalars {
            if character == "/" || character == "\\" { escaped.unicodeScalars.append("\\") }
            escaped.unicodeScalars.append(character)
        }
        return escaped
    }

    /// The path of these group and entry names, from the root.
    public init(components: [String]) {
        self.components = components
    }

    /// `/A/B/Title`.
    public var description: String { "/" + components.map(Self.escaped).joined(separator: "/") }

    /// The path of the group holding what this path names, and its last name.
    public var parentAndName: (parent: VaultPath, name: String)? {
        guard let name = components.last else { return nil }
        return (VaultPath(components: Array(components.dropLast())), name)
    }
}

extension Vault {
    /// The group at `path`.
    public func group(at path: VaultPath) -> Group? {
        var current = root
        for name in path.components {
            guard let child = current.groups.first(where: { $0.name == name }) else { return nil }
            current = child
        }
        return current
    }

    /// The entry at `path`: its group's path, then its title.
    public func entry(at path: VaultPath) -> Entry? {
        guard let (parent, title) = path.parentAndName else { return nil }
        return group(at: parent)?.entries.first { $0.title == title }
    }

    /// The path of the entry `uuid` (nil when there is none).
    public func path(ofEntry uuid: UUID) -> VaultPath? {
        var found: VaultPath?
        root.forEachGroup { group, names in
            if found == nil, let entry = group.entries.first(where: { $0.uuid == uuid }) {
                found = VaultPath(components: names + [entry.title])
            }
        }
        return found
    }

    /// The path of the group `uuid` (nil when there is none; the root's path has no components).
    public func path(ofGroup uuid: UUID) -> VaultPath? {
        var found: VaultPath?
        root.forEachGroup { group, names in
            if found == nil, group.uuid == uuid { found = VaultPath(components: names) }
        }
        return found
    }
}

public import Foundation

/// KeePassXC's KeeShare reference on a group (the custom data item `KeeShare/Reference`), written
/// and read through pykeepass by `Helpers/keeshare_reference.py`: a reference in a vault whatever our
/// own KeeShare code does.
public enum KeeShareReference {
    /// What a reference does, as KeePassXC's `Type` element says it.
    public enum Kind: String, Sendable {
        case importing = "import", exporting = "export", synchronizing = "synchronize", inactive
    }

    /// A reference as read back: the stored value and what it decodes to.
    public struct Decoded: Decodable, Sendable, Equatable {
        /// The custom data value (base64 of `xml`).
        public let value: String
        /// The reference XML, byte for byte.
        public let xml: String
        /// The element names inside `Type` (`Import`, `Export`).
        public let type: [String]
        /// The reference's own UUID (`Group`), in hex.
        public let group: String
        public let path: String
        public let password: String
    }

    /// A group's reference (nil: none) and every custom data key it has.
    public struct GroupData: Decodable, Sendable {
        public let reference: Decoded?
        public let customData: [String]
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    private static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Helpers/keeshare_reference.py").path

    /// Gives the group at `group` ("Shared", "Team/Shared") in `vault` a reference of `kind` to the
    /// container at `path` (relative to the vault's folder, or absolute) opened with `password`.
    /// The vault is rewritten by pykeepass (same KDBX version; its stale header hash dropped).
    public static func set(_ kind: Kind, path: String, password: String, group: String, vault: URL, vaultPassword: String) throws {
        let outcome = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"),
                                            ["python3", script, "set", vault.path, group, kind.rawValue, path],
                                            input: Data("\(vaultPassword)\n\(password)\n".utf8), timeout: 60)
        guard outcome.status == 0 else { throw Failure(description: "setting the reference of \(group) failed: \(outcome.standardError)") }
    }

    /// The reference and custom data keys of the group at `group` in `vault`.
    public static func read(group: String, vault: URL, vaultPassword: String) throws -> GroupData {
        let outcome = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", script, "get", vault.path, group],
                                            input: Data("\(vaultPassword)\n".utf8), timeout: 60)
        guard outcome.status == 0 else { throw Failure(description: "reading the reference of \(group) failed: \(outcome.standardError)") }
        return try JSONDecoder().decode(GroupData.self, from: outcome.standardOutput)
    }
}

public import Foundation

/// Asks the reference tools (pykeepass, keepassxc-cli) what they see in a vault file, through
/// `Fixtures/vault_view.py`.
public enum ReferenceTools {
    public enum Tool: String, CaseIterable, Sendable {
        case pykeepass, keepassxc
    }

    /// A vault as a reference tool reports it.
    public struct View: Decodable {
        public let meta: FixtureVault.Meta
        public let groups: [String]
        public let entries: [FixtureVault.Entry]
        public let deletedObjects: Int
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        public init(description: String) { self.description = description }
    }

    /// `tool`'s view of the vault at `path`.
    public static func view(_ tool: Tool, path: URL, password: String?, keyFile: URL?) throws -> View {
        let script = FixtureVault.fixturesDirectory.appendingPathComponent("vault_view.py")
        var environment = ["QT_QPA_PLATFORM": "offscreen"]
        if password == nil { environment["VAULT_VIEW_NO_PASSWORD"] = "1" }
        let outcome = try ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/env"),
            ["python3", script.path, tool.rawValue, path.path, keyFile?.path ?? ""],
            input: Data(((password ?? "") + "\n").utf8), environment: environment)
        guard outcome.status == 0 else {
            throw Failure(description: "\(tool.rawValue) could not read \(path.lastPathComponent): \(outcome.standardError)")
        }
        return try JSONDecoder().decode(View.self, from: outcome.standardOutput)
    }
}

public import Foundation

/// A vault under `Fixtures/vaults/` with its manifest (written by `Fixtures/make-fixtures`), and the
/// shape in which the reference tools report a vault (`Fixtures/vault_view.py`).
public struct FixtureVault: Decodable, Sendable, CustomStringConvertible {
    public struct Credentials: Decodable, Sendable {
        public let password: String?
        public let keyFile: String?
    }
    public struct Format: Decodable, Sendable {
        public let version: String
        public let cipher: String
        public let kdf: String
        public let compression: String
    }
    public struct Meta: Decodable, Sendable, Equatable {
        public let name: String
        public let recycleBin: Bool
    }
    public struct Attachment: Decodable, Sendable, Equatable {
        public let name: String
        public let sha256: String
    }
    /// An entry as the manifest (pykeepass) or `keepassxc-cli` sees it. KeePassXC's XML export has
    /// no attachment contents, so it reports `attachmentNames` instead of `attachments`.
    public struct Entry: Decodable, Sendable, Equatable {
        public let uuid: String
        public let group: String
        public let title: String
        public let username: String
        public let password: String
        public let url: String
        public let notes: String
        public let tags: [String]
        public let fields: [String: String]
        public let protected: [String]
        public let attachments: [Attachment]?
        public let attachmentNames: [String]?
        public let historyCount: Int
        public let inRecycleBin: Bool
    }

    public let file: String
    public let credentials: Credentials
    public let format: Format
    public let meta: Meta
    public let groups: [String]
    public let entries: [Entry]
    public let deletedObjects: Int

    public var description: String { file }

    /// The repository's `Fixtures` folder.
    public static let fixturesDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures")

    /// Every fixture manifest, sorted by file name.
    public static func all() throws -> [FixtureVault] {
        let directory = fixturesDirectory.appendingPathComponent("vaults")
        let manifests = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasSuffix(".json") }.sorted()
        return try manifests.map { name in
            try JSONDecoder().decode(FixtureVault.self, from: Data(contentsOf: directory.appendingPathComponent(name)))
        }
    }

    /// The fixture whose vault file is `file`.
    public static func named(_ file: String) throws -> FixtureVault {
        guard let fixture = try all().first(where: { $0.file == file }) else {
            throw CocoaError(.fileNoSuchFile)
        }
        return fixture
    }

    /// The vault file's bytes.
    public func bytes() throws -> Data {
        try Data(contentsOf: path)
    }

    /// Where the vault file is.
    public var path: URL {
        Self.fixturesDirectory.appendingPathComponent("vaults").appendingPathComponent(file)
    }

    /// Where the key file is, if the vault uses one.
    public var keyFilePath: URL? {
        credentials.keyFile.map { Self.fixturesDirectory.appendingPathComponent($0) }
    }

    /// The key file's bytes, if the vault uses one.
    public func keyFileBytes() throws -> Data? {
        try keyFilePath.map { try Data(contentsOf: $0) }
    }
}

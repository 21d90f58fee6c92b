import Foundation

/// A vault under `Fixtures/vaults/` with its manifest (written by `Fixtures/make-fixtures`).
struct FixtureVault: Decodable, Sendable, CustomStringConvertible {
    struct Credentials: Decodable, Sendable {
        let password: String?
        let keyFile: String?
    }
    struct Format: Decodable, Sendable {
        let version: String
        let cipher: String
        let kdf: String
        let compression: String
    }
    struct Meta: Decodable, Sendable {
        let name: String
        let recycleBin: Bool
    }
    struct Attachment: Decodable, Sendable, Equatable {
        let name: String
        let sha256: String
    }
    struct Entry: Decodable, Sendable {
        let uuid: String
        let group: String
        let title: String
        let username: String
        let password: String
        let url: String
        let notes: String
        let tags: [String]
        let fields: [String: String]
        let protected: [String]
        let attachments: [Attachment]
        let historyCount: Int
        let inRecycleBin: Bool
    }

    let file: String
    let writtenBy: String
    let credentials: Credentials
    let format: Format
    let meta: Meta
    let groups: [String]
    let entries: [Entry]
    let deletedObjects: Int

    var description: String { file }

    static let fixturesDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures")

    /// Every fixture manifest, sorted by file name.
    static func all() throws -> [FixtureVault] {
        let directory = fixturesDirectory.appendingPathComponent("vaults")
        let manifests = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasSuffix(".json") }.sorted()
        return try manifests.map { name in
            try JSONDecoder().decode(FixtureVault.self, from: Data(contentsOf: directory.appendingPathComponent(name)))
        }
    }

    /// The vault file's bytes.
    func bytes() throws -> Data {
        try Data(contentsOf: Self.fixturesDirectory.appendingPathComponent("vaults").appendingPathComponent(file))
    }

    /// The key file's bytes, if the vault uses one.
    func keyFileBytes() throws -> Data? {
        try credentials.keyFile.map { try Data(contentsOf: Self.fixturesDirectory.appendingPathComponent($0)) }
    }
}

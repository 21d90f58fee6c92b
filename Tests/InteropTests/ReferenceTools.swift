import Foundation

/// Runs the reference tools (pykeepass, keepassxc-cli) through `Fixtures/vault_view.py` and decodes
/// their view of a vault.
enum ReferenceTools {
    enum Tool: String, CaseIterable, Sendable {
        case pykeepass, keepassxc
    }

    /// An entry as a reference tool sees it.
    struct EntryView: Decodable, Equatable {
        struct Attachment: Decodable, Equatable {
            let name: String
            let sha256: String
        }
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
        let attachments: [Attachment]?
        let attachmentNames: [String]?
        let historyCount: Int
        let inRecycleBin: Bool
    }

    struct VaultView: Decodable {
        struct Meta: Decodable {
            let name: String
            let recycleBin: Bool
        }
        let meta: Meta
        let groups: [String]
        let entries: [EntryView]
        let deletedObjects: Int
    }

    static let fixtures = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures")

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// `tool`'s view of the vault at `path`.
    static func view(_ tool: Tool, path: URL, password: String?, keyFile: URL?) throws -> VaultView {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", fixtures.appendingPathComponent("vault_view.py").path, tool.rawValue, path.path,
                             keyFile?.path ?? ""]
        var environment = ProcessInfo.processInfo.environment
        environment["QT_QPA_PLATFORM"] = "offscreen"
        if password == nil { environment["VAULT_VIEW_NO_PASSWORD"] = "1" }
        process.environment = environment
        let input = Pipe(), output = Pipe(), errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        input.fileHandleForWriting.write(Data(((password ?? "") + "\n").utf8))
        try input.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let errorText = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(description: "\(tool.rawValue) could not read \(path.lastPathComponent): \(errorText)")
        }
        return try JSONDecoder().decode(VaultView.self, from: data)
    }
}

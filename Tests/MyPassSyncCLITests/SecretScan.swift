import Foundation

/// The secrets of the fixture vaults (their passwords and every protected value in the manifests),
/// and a scan for them in text or files.
enum SecretScan {
    static let secrets: [String] = {
        var found: Set<String> = []
        let folder = CLIFixtures.directory.appendingPathComponent("vaults")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        for name in names where name.hasSuffix(".json") {
            guard let data = try? Data(contentsOf: folder.appendingPathComponent(name)),
                  let manifest = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { continue }
            if let password = (manifest["credentials"] as? [String: Any])?["password"] as? String { found.insert(password) }
            for entry in manifest["entries"] as? [[String: Any]] ?? [] {
                if let password = entry["password"] as? String { found.insert(password) }
                let fields = entry["fields"] as? [String: String] ?? [:]
                for key in entry["protected"] as? [String] ?? [] { if let value = fields[key] { found.insert(value) } }
            }
        }
        // Short values ("1234") would match by chance; every fixture secret worth finding is longer.
        return found.filter { $0.count >= 5 }.sorted()
    }()

    /// The first secret `text` contains, if any.
    static func firstSecret(in text: String) -> String? {
        secrets.first { text.contains($0) }
    }

    /// Files under `directory` (recursively) whose bytes contain a secret, with the secret's length.
    static func filesWithSecrets(under directory: URL) -> [String] {
        guard let walker = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil) else { return [] }
        var hits: [String] = []
        for case let url as URL in walker {
            guard let data = try? Data(contentsOf: url) else { continue }
            let text = String(decoding: data, as: UTF8.self)
            if firstSecret(in: text) != nil { hits.append(url.path) }
        }
        return hits
    }
}

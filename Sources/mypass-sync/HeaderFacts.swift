internal import Foundation
internal import KDBXFormat

/// The format facts of a vault in the words of CLI.md (`info`, and `format` in `export --format json`).
struct HeaderFacts: Encodable {
    let version: String
    let cipher: String
    let kdf: String
    let compression: String
    let kdfParameters: KDFFacts
    /// The file's version is read but not written (KDBX 2.x): a save writes 3.1.
    private let isReadOnlyVersion: Bool

    private enum CodingKeys: String, CodingKey { case version, cipher, kdf, compression, kdfParameters }

    /// KDF parameters in user units.
    struct KDFFacts: Encodable {
        var rounds: UInt64?
        var iterations: UInt64?
        var memoryBytes: UInt64?
        var parallelism: UInt32?
        var argon2Version: String?
    }

    init(_ header: OuterHeader) {
        version = header.version.description
        isReadOnlyVersion = !header.version.isWritten
        cipher = header.cipher.rawValue
        kdf = header.kdf.name
        compression = header.compression.name
        switch header.kdf {
        case .aesKDF(_, let rounds):
            kdfParameters = KDFFacts(rounds: rounds)
        case .argon2(let settings):
            kdfParameters = KDFFacts(
                iterations: settings.iterations, memoryBytes: settings.memoryBytes,
                parallelism: settings.parallelism, argon2Version: "0x" + String(settings.version, radix: 16))
        }
    }

    /// The text `info` prints.
    func humanText(file: String) -> String {
        var kdfLine = kdf
        if let rounds = kdfParameters.rounds {
            kdfLine += " (\(rounds) rounds)"
        } else if let iterations = kdfParameters.iterations, let memory = kdfParameters.memoryBytes,
                  let parallelism = kdfParameters.parallelism {
            kdfLine += " (iterations \(iterations), memory \(Self.formatBytes(memory)), parallelism \(parallelism)"
                + ", version \(kdfParameters.argon2Version ?? "?"))"
        }
        return """
            file:        \(file)
            version:     KDBX \(version)\(savedAs)
            cipher:      \(cipher)
            kdf:         \(kdfLine)
            compression: \(compression)
            """
    }

    /// What a save writes when the file's version is one this project reads but does not write.
    private var savedAs: String { isReadOnlyVersion ? " (KeePass 2.0x: read; a save writes KDBX 3.1)" : "" }

    /// One line: `KDBX 4.0, chacha20, argon2id (...), gzip`.
    var oneLine: String {
        humanText(file: "").split(separator: "\n").dropFirst().map { line in
            line.split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        }.joined(separator: ", ")
    }

    private static func formatBytes(_ bytes: UInt64) -> String {
        if bytes % (1 << 20) == 0 { return "\(bytes >> 20) MiB" }
        if bytes % (1 << 10) == 0 { return "\(bytes >> 10) KiB" }
        return "\(bytes) bytes"
    }
}

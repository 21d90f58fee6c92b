import Foundation
import Testing

/// A known-answer vector file under `Fixtures/vectors/`: where the values come from, and the vectors.
struct VectorFile<Vector: Decodable & Sendable>: Decodable {
    let source: String
    let vectors: [Vector]

    /// Decodes `Fixtures/vectors/<name>`, located from this source file's path.
    static func load(_ name: String) throws -> [Vector] {
        let url = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/vectors/\(name)")
        let file = try JSONDecoder().decode(VectorFile<Vector>.self, from: Data(contentsOf: url))
        guard !file.vectors.isEmpty else { throw VectorFileError.empty(name) }
        return file.vectors
    }
}

enum VectorFileError: Error {
    case empty(String)
    case badHex(String)
}

/// Hexadecimal text in the vector files.
enum Hex {
    /// The bytes of `text` (two hex digits a byte, no separators).
    static func decode(_ text: String) throws -> Data {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { throw VectorFileError.badHex(text) }
        var bytes = Data(capacity: digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let high = value(digits[index]), let low = value(digits[index + 1]) else {
                throw VectorFileError.badHex(text)
            }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    /// Lowercase hex of `bytes`.
    static func encode(_ bytes: some Sequence<UInt8>) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }

    private static func value(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

internal import Foundation

/// JSON output of the tool and the library (reports, events): sorted keys, pretty-printed, no escaped slashes, dates in ISO 8601.
public enum JSONText {
    /// `value` as pretty-printed JSON with sorted keys and ISO 8601 dates.
    public static func encode(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// `value` as one line of JSON with sorted keys (JSON-lines event streams).
    public static func line(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}

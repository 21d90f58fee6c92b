internal import Foundation
internal import MyPassCore

/// KeePass's conventions for values in the document; every malformed value is `.corrupt`.
extension ElementTable {
    func bool(_ index: Int, names: ElementNameTable) throws(KDBXError) -> Bool {
        switch string(index).lowercased() {
        case "true": return true
        case "false", "": return false
        default: throw .corrupt("\(names.string(name(index))): not a boolean")
        }
    }

    /// KeePass's nullable boolean: "null" (or empty) is nil.
    func optionalBool(_ index: Int, names: ElementNameTable) throws(KDBXError) -> Bool? {
        let text = string(index).lowercased()
        if text == "null" || text.isEmpty { return nil }
        return try bool(index, names: names)
    }

    func int(_ index: Int, names: ElementNameTable) throws(KDBXError) -> Int64 {
        let text = string(index).trimmingCharacters(in: .whitespaces)
        guard let value = Int64(text) else { throw .corrupt("\(names.string(name(index))): not a number") }
        return value
    }

    /// A required UUID in base64.
    func uuid(_ index: Int, names: ElementNameTable) throws(KDBXError) -> UUID {
        guard let bytes = Base64.decode(self.bytes(index)), let uuid = UUID(bytes: Data(bytes)) else {
            throw .corrupt("\(names.string(name(index))): not a base64 UUID")
        }
        return uuid
    }

    /// An optional UUID reference: the all-zero UUID and an empty element are nil.
    func optionalUUID(_ index: Int, names: ElementNameTable) throws(KDBXError) -> UUID? {
        if isEmpty(index) { return nil }
        let uuid = try uuid(index, names: names)
        return uuid == Self.zeroUUID ? nil : uuid
    }

    static let zeroUUID = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))

    /// A time: base64 of little-endian seconds since year one (KDBX 4) or ISO 8601 (KDBX 3.1).
    func time(_ index: Int, names: ElementNameTable) throws(KDBXError) -> Timestamp {
        let raw = bytes(index)
        if raw.count == 12, let decoded = Base64.decode(raw), decoded.count == 8 {
            var seconds: Int64 = 0
            for (offset, byte) in decoded.enumerated() { seconds |= Int64(byte) << (8 * offset) }
            return Timestamp(secondsSinceYearOne: seconds)
        }
        guard let parsed = Timestamp(iso8601: String(decoding: raw, as: UTF8.self)) else {
            throw .corrupt("\(names.string(name(index))): not a KeePass time")
        }
        return parsed
    }

    /// Base64 content (attachments, icons, header hash).
    func base64(_ index: Int, names: ElementNameTable) throws(KDBXError) -> Data {
        guard let bytes = Base64.decode(self.bytes(index)) else {
            throw .corrupt("\(names.string(name(index))): invalid base64")
        }
        return Data(bytes)
    }

    /// KeePass tag lists are separated by ';' or ','.
    func tags(_ index: Int) -> [String] {
        string(index).split(whereSeparator: { $0 == ";" || $0 == "," })
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}

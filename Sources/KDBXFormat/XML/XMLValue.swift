internal import Foundation
internal import MyPassCore

/// KeePass's conventions for values in the document; every malformed value is `.corrupt`.
extension ElementTable {
    func bool(_ index: Int, names: ElementNameTable) throws(KDBXError) -> Bool {
        switch try optionalBool(index, names: names, allowingNull: false) {
        case true?: return true
        default: return false
        }
    }

    /// KeePass's nullable boolean: "null" (or empty) is nil. Case-insensitive.
    func optionalBool(_ index: Int, names: ElementNameTable, allowingNull: Bool = true) throws(KDBXError) -> Bool? {
        let raw = bytes(index)
        if raw.isEmpty { return allowingNull ? nil : false }
        /// ASCII case-insensitive comparison (no lowered copy: this runs for several elements per entry).
        func matches(_ word: StaticString) -> Bool {
            raw.count == word.utf8CodeUnitCount && zip(raw, UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount))
                .allSatisfy { $0 | 0x20 == $1 }
        }
        if matches("true") { return true }
        if matches("false") { return false }
        if allowingNull && matches("null") { return nil }
        throw .corrupt("\(names.string(name(index))): not a boolean")
    }

    /// A decimal integer (optional sign, surrounding spaces allowed).
    func int(_ index: Int, names: ElementNameTable) throws(KDBXError) -> Int64 {
        var digits = bytes(index)[...]
        while digits.first == 0x20 || digits.first == 0x09 { digits.removeFirst() }
        while digits.last == 0x20 || digits.last == 0x09 { digits.removeLast() }
        var negative = false
        if let sign = digits.first, sign == UInt8(ascii: "-") || sign == UInt8(ascii: "+") {
            negative = sign == UInt8(ascii: "-")
            digits.removeFirst()
        }
        guard !digits.isEmpty, digits.count <= 19 else { throw .corrupt("\(names.string(name(index))): not a number") }
        var value: Int64 = 0
        for digit in digits {
            guard digit >= 48 && digit <= 57 else { throw .corrupt("\(names.string(name(index))): not a number") }
            let (multiplied, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (added, overflow2) = multiplied.addingReportingOverflow(Int64(digit - 48))
            guard !overflow1 && !overflow2 else { throw .corrupt("\(names.string(name(index))): number out of range") }
            value = added
        }
        return negative ? -value : value
    }

    /// A required UUID in base64.
    func uuid(_ index: Int, names: ElementNameTable) throws(KDBXError) -> UUID {
        var raw: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let valid = withUnsafeMutableBytes(of: &raw) { Base64.decode(bytes(index), count: 16, into: $0) }
        guard valid else { throw .corrupt("\(names.string(name(index))): not a base64 UUID") }
        return UUID(uuid: raw)
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
        var seconds: UInt64 = 0
        if raw.count == 12, withUnsafeMutableBytes(of: &seconds, { Base64.decode(raw, count: 8, into: $0) }) {
            return Timestamp(secondsSinceYearOne: Int64(bitPattern: UInt64(littleEndian: seconds)))
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

    /// KeePass tag lists are separated by ';' or ',' (spaces around tags ignored). `earlier`, the
    /// tags of the version before, is returned itself when the text lists the same tags.
    func tags(_ index: Int, reusing earlier: [String] = []) -> [String] {
        let text = bytes(index)
        guard !text.isEmpty else { return [] }
        var pieces: [Range<Int>] = []
        var start = 0
        for position in 0...text.count where position == text.count || text[position] == UInt8(ascii: ";") || text[position] == UInt8(ascii: ",") {
            var lower = start, upper = position
            while lower < upper && text[lower] == 0x20 { lower += 1 }
            while upper > lower && text[upper - 1] == 0x20 { upper -= 1 }
            if lower < upper { pieces.append(lower..<upper) }
            start = position + 1
        }
        if pieces.count == earlier.count,
           zip(pieces, earlier).allSatisfy({ piece, tag in tag.hasUTF8(UnsafeBufferPointer(rebasing: text[piece])) }) {
            return earlier
        }
        return pieces.map { String(decoding: UnsafeBufferPointer(rebasing: text[$0]), as: UTF8.self) }
    }
}

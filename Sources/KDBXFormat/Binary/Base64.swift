/// Strict standard base64 (RFC 4648, with padding) for values read from the vault document: no
/// whitespace, no missing padding. Faster than going through `Data(base64Encoded:)` for the many
/// short values (UUIDs, times) a document holds.
enum Base64 {
    private static let decodeTable: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, character) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8.enumerated() {
            table[Int(character)] = UInt8(index)
        }
        return table
    }()

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// The base64 text of `bytes` (for the short values written per entry: times, UUIDs).
    static func encode(_ bytes: UnsafeRawBufferPointer) -> String {
        let length = (bytes.count + 2) / 3 * 4
        return String(unsafeUninitializedCapacity: length) { output in
            alphabet.withUnsafeBufferPointer { table in
                var written = 0
                var index = 0
                while index < bytes.count {
                    let remaining = bytes.count - index
                    let b0 = UInt32(bytes[index])
                    let b1 = remaining > 1 ? UInt32(bytes[index + 1]) : 0
                    let b2 = remaining > 2 ? UInt32(bytes[index + 2]) : 0
                    let group = b0 << 16 | b1 << 8 | b2
                    output[written] = table[Int(group >> 18 & 63)]
                    output[written + 1] = table[Int(group >> 12 & 63)]
                    output[written + 2] = remaining > 1 ? table[Int(group >> 6 & 63)] : UInt8(ascii: "=")
                    output[written + 3] = remaining > 2 ? table[Int(group & 63)] : UInt8(ascii: "=")
                    written += 4
                    index += 3
                }
                return written
            }
        }
    }

    /// Decodes exactly `count` bytes (at most 18) from `text` into `output` without allocating; false
    /// when `text` is not the strict base64 of exactly that many bytes.
    static func decode(_ text: UnsafeBufferPointer<UInt8>, count: Int, into output: UnsafeMutableRawBufferPointer) -> Bool {
        let expectedLength = (count + 2) / 3 * 4
        guard text.count == expectedLength, output.count >= count else { return false }
        return decodeTable.withUnsafeBufferPointer { table -> Bool in
            var written = 0
            var index = text.startIndex
            while index < text.endIndex {
                var group: UInt32 = 0
                var valid = 0
                for offset in 0..<4 {
                    let character = text[index + offset]
                    if character == UInt8(ascii: "=") {
                        group <<= 6
                    } else {
                        let value = table[Int(character)]
                        guard value < 64, valid == offset else { return false }
                        group = group << 6 | UInt32(value)
                        valid += 1
                    }
                }
                // Four characters give three bytes, fewer with padding (two for "xx==", three for "xxx=").
                var shift: UInt32 = 16
                while shift <= 16 && written < count && (valid > 1 || shift == 16) {
                    output[written] = UInt8(truncatingIfNeeded: group >> shift)
                    written += 1
                    shift &-= 8
                }
                index += 4
            }
            return written == count
        }
    }

    /// The bytes `text` encodes, or nil when it is not strict base64.
    static func decode(_ text: [UInt8]) -> [UInt8]? {
        text.withUnsafeBufferPointer { decode($0) }
    }

    /// The bytes `text` encodes, or nil when it is not strict base64.
    static func decode(_ text: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        if text.isEmpty { return [] }
        var valid = true
        let output = [UInt8](unsafeUninitializedCapacity: maximumDecodedCount(text.count)) { buffer, initialized in
            guard let base = buffer.baseAddress, let count = decode(text, into: base) else {
                valid = false
                initialized = 0
                return
            }
            initialized = count
        }
        return valid ? output : nil
    }

    /// The most bytes a text of `length` characters decodes to (`decode(_:into:)` needs this much room).
    static func maximumDecodedCount(_ length: Int) -> Int { length / 4 * 3 }

    /// Decodes `text` into `output` (room for `maximumDecodedCount(text.count)` bytes); the number of
    /// bytes written, or nil when `text` is not strict base64.
    static func decode(_ text: UnsafeBufferPointer<UInt8>, into output: UnsafeMutablePointer<UInt8>) -> Int? {
        let count = text.count
        guard count % 4 == 0 else { return nil }
        if count == 0 { return 0 }
        var padding = 0
        if text[count - 1] == UInt8(ascii: "=") { padding += 1 }
        if text[count - 2] == UInt8(ascii: "=") { padding += 1 }
        return decodeTable.withUnsafeBufferPointer { table -> Int? in
            var index = 0
            var written = 0
            while index < count {
                let isLast = index + 4 == count
                let a = table[Int(text[index])], b = table[Int(text[index + 1])]
                let cByte = text[index + 2], dByte = text[index + 3]
                let c = isLast && padding >= 2 && cByte == UInt8(ascii: "=") ? 0 : table[Int(cByte)]
                let d = isLast && padding >= 1 && dByte == UInt8(ascii: "=") ? 0 : table[Int(dByte)]
                guard a | b | c | d < 64 else { return nil }
                output[written] = a << 2 | b >> 4
                written += 1
                if !(isLast && padding >= 2) {
                    output[written] = b << 4 | c >> 2
                    written += 1
                }
                if !(isLast && padding >= 1) {
                    output[written] = c << 6 | d
                    written += 1
                }
                index += 4
            }
            return written
        }
    }
}

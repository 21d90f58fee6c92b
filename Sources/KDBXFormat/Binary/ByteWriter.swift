internal import Foundation

/// Appends little-endian values to a growing buffer (the mirror of `ByteReader`).
struct ByteWriter {
    private(set) var data: Data

    /// A writer appending to `data` (empty by default).
    init(appendingTo data: Data = Data()) {
        self.data = data
    }

    mutating func write(_ value: UInt8) { data.append(value) }
    mutating func write(_ value: UInt16) { appendLittleEndian(UInt64(value), byteCount: 2) }
    mutating func write(_ value: UInt32) { appendLittleEndian(UInt64(value), byteCount: 4) }
    mutating func write(_ value: Int32) { write(UInt32(bitPattern: value)) }
    mutating func write(_ value: UInt64) { appendLittleEndian(value, byteCount: 8) }
    mutating func write(_ bytes: some ContiguousBytes) {
        bytes.withUnsafeBytes { data.append(contentsOf: $0) }
    }

    private mutating func appendLittleEndian(_ value: UInt64, byteCount: Int) {
        for index in 0..<byteCount {
            data.append(UInt8(truncatingIfNeeded: value >> (8 * index)))
        }
    }
}

extension UInt64 {
    /// The value as 8 little-endian bytes.
    var littleEndianBytes: Data {
        var writer = ByteWriter()
        writer.write(self)
        return writer.data
    }
}

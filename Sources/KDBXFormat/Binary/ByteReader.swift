internal import Foundation

/// Reads little-endian values from untrusted bytes. Every read is bounds-checked and throws
/// `KDBXError.truncated` instead of trapping; nothing is allocated from a length before the bytes
/// it claims are known to be there.
struct ByteReader {
    private let bytes: Data
    /// Offset of the next byte to read, relative to the start of `bytes`.
    private(set) var offset: Int
    /// What is being read, for error messages.
    let context: String

    init(_ bytes: Data, context: String) {
        self.bytes = bytes
        self.offset = bytes.startIndex
        self.context = context
    }

    /// Bytes not yet read.
    var remainingCount: Int { bytes.endIndex - offset }
    /// Whether every byte was read.
    var isAtEnd: Bool { offset >= bytes.endIndex }
    /// Number of bytes read so far.
    var consumedCount: Int { offset - bytes.startIndex }

    mutating func readUInt8() throws(KDBXError) -> UInt8 {
        try require(1)
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func readUInt16() throws(KDBXError) -> UInt16 {
        UInt16(truncatingIfNeeded: try readLittleEndian(byteCount: 2))
    }

    mutating func readUInt32() throws(KDBXError) -> UInt32 {
        UInt32(truncatingIfNeeded: try readLittleEndian(byteCount: 4))
    }

    mutating func readInt32() throws(KDBXError) -> Int32 {
        Int32(bitPattern: try readUInt32())
    }

    mutating func readUInt64() throws(KDBXError) -> UInt64 {
        try readLittleEndian(byteCount: 8)
    }

    /// The next `count` bytes; throws if fewer remain (a claimed length is checked before copying).
    mutating func readBytes(_ count: Int) throws(KDBXError) -> Data {
        guard count >= 0 else { throw .corrupt("\(context): negative length") }
        try require(count)
        defer { offset += count }
        return bytes.subdata(in: offset..<(offset + count))
    }

    /// The next `count` bytes as a slice of the input (no copy); throws if fewer remain.
    mutating func readSlice(_ count: Int) throws(KDBXError) -> Data {
        guard count >= 0 else { throw .corrupt("\(context): negative length") }
        try require(count)
        defer { offset += count }
        return bytes[offset..<(offset + count)]
    }

    /// Moves past `count` bytes.
    mutating func skip(_ count: Int) throws(KDBXError) {
        guard count >= 0 else { throw .corrupt("\(context): negative length") }
        try require(count)
        offset += count
    }

    /// Everything not yet read.
    mutating func readRemaining() -> Data {
        defer { offset = bytes.endIndex }
        return bytes.subdata(in: offset..<bytes.endIndex)
    }

    private mutating func readLittleEndian(byteCount: Int) throws(KDBXError) -> UInt64 {
        try require(byteCount)
        var value: UInt64 = 0
        for index in 0..<byteCount {
            value |= UInt64(bytes[offset + index]) << (8 * index)
        }
        offset += byteCount
        return value
    }

    private func require(_ count: Int) throws(KDBXError) {
        guard count <= remainingCount else { throw .truncated(context) }
    }
}

internal import Foundation
internal import MyPassCrypto

/// KDBX 4's authenticated block stream: each block carries HMAC-SHA-256 over its index, length and
/// data under a per-block key, and an empty block ends the stream.
enum HMACBlockStream {
    /// Block size used when writing (KeePass and KeePassXC use 1 MiB).
    static let writeBlockSize = 1 << 20

    /// The per-block HMAC key: SHA-512(index || baseKey). The header uses index UInt64.max.
    static func blockKey(index: UInt64, baseKey: SecureBytes) -> SecureBytes {
        var hasher = SHA2Hasher(.sha512)
        hasher.update(index.littleEndianBytes)
        hasher.update(baseKey)
        return hasher.finalizeSecure()
    }

    /// Checks the blocks of `stream` in order and hands each block's content (a slice of `stream`) to
    /// `body` once its HMAC is verified; a bad HMAC is corruption (the header HMAC already proved
    /// the key right). At most `limit` bytes of content in all.
    static func forEachBlock(
        _ stream: Data, baseKey: SecureBytes, limit: Int, _ body: (Data) throws(KDBXError) -> Void
    ) throws(KDBXError) {
        var reader = ByteReader(stream, context: "HMAC block stream")
        var total = 0
        var index: UInt64 = 0
        while true {
            let storedMAC = try reader.readBytes(32)
            let size = try reader.readInt32()
            guard size >= 0 else { throw .corrupt("HMAC block \(index) has a negative size") }
            guard total + Int(size) <= limit else {
                throw .resourceCapExceeded("encrypted payload exceeds \(limit) bytes")
            }
            let block = try reader.readSlice(Int(size))
            var authenticator = HMACSHA256.Authenticator(key: blockKey(index: index, baseKey: baseKey))
            authenticator.update(index.littleEndianBytes)
            authenticator.update(UInt32(bitPattern: size).littleEndianBytes)
            authenticator.update(block)
            guard ConstantTime.isEqual(authenticator.finalize(), storedMAC) else {
                throw .corrupt("HMAC block \(index) failed its integrity check")
            }
            if size == 0 { break }
            total += Int(size)
            try body(block)
            index += 1
        }
        guard reader.isAtEnd else { throw .corrupt("bytes after the final HMAC block") }
    }

    /// The length of `payloadLength` bytes written as blocks (each with its HMAC and length, then the final block).
    static func framedLength(of payloadLength: Int) -> Int {
        (payloadLength + writeBlockSize - 1) / writeBlockSize * 36 + payloadLength + 36
    }

    /// Splits `payload` into authenticated blocks followed by the empty final block, appended to
    /// `file` (a caller that reserved `framedLength` copies the payload once).
    static func write(_ payload: Data, baseKey: SecureBytes, appendingTo file: inout Data) {
        var writer = BlockWriter(baseKey: baseKey)
        writer.append(payload, to: &file)
        writer.finish(&file)
    }

    /// Writes a payload handed over in pieces as authenticated blocks of at most `writeBlockSize`
    /// bytes (the same blocks as `write` of the whole payload when every piece but the last is a
    /// whole number of blocks), then the empty final block.
    struct BlockWriter {
        private let baseKey: SecureBytes
        private var index: UInt64 = 0

        init(baseKey: SecureBytes) {
            self.baseKey = baseKey
        }

        /// Appends `piece` to `file` as blocks.
        mutating func append(_ piece: Data, to file: inout Data) {
            var offset = piece.startIndex
            while offset < piece.endIndex {
                let end = min(offset + writeBlockSize, piece.endIndex)
                appendBlock(piece[offset..<end], to: &file)
                offset = end
            }
        }

        /// Appends the empty block that ends the stream.
        mutating func finish(_ file: inout Data) {
            appendBlock(Data(), to: &file)
        }

        private mutating func appendBlock(_ block: Data, to file: inout Data) {
            var authenticator = HMACSHA256.Authenticator(key: blockKey(index: index, baseKey: baseKey))
            authenticator.update(index.littleEndianBytes)
            authenticator.update(UInt32(block.count).littleEndianBytes)
            authenticator.update(block)
            file.append(authenticator.finalize())
            file.append(contentsOf: UInt32(block.count).littleEndianBytes)
            file.append(block)
            index += 1
        }
    }
}

extension UInt32 {
    /// The value as 4 little-endian bytes.
    var littleEndianBytes: Data {
        var writer = ByteWriter()
        writer.write(self)
        return writer.data
    }
}

internal import Foundation
internal import MyPassCrypto

/// KDBX 3.1's block stream: index, SHA-256 and length per block; a zero-length block with a zero
/// hash ends it.
enum HashedBlockStream {
    static let writeBlockSize = 1 << 20

    static func read(_ stream: Data, limit: Int) throws(KDBXError) -> Data {
        var reader = ByteReader(stream, context: "hashed block stream")
        var output = Data()
        var expectedIndex: UInt32 = 0
        while true {
            let index = try reader.readUInt32()
            guard index == expectedIndex else { throw .corrupt("hashed block \(index) out of order") }
            let hash = try reader.readBytes(32)
            let size = try reader.readInt32()
            guard size >= 0 else { throw .corrupt("hashed block \(index) has a negative size") }
            if size == 0 {
                guard hash.allSatisfy({ $0 == 0 }) else { throw .corrupt("final hashed block has a non-zero hash") }
                break
            }
            guard output.count + Int(size) <= limit else {
                throw .resourceCapExceeded("payload exceeds \(limit) bytes")
            }
            let block = try reader.readBytes(Int(size))
            guard SHA256.hash(block) == hash else { throw .corrupt("hashed block \(index) failed its integrity check") }
            output.append(block)
            expectedIndex &+= 1
        }
        // Nothing may follow the final block (CBC padding is already removed): a damaged last cipher
        // block can decrypt to valid-looking padding by chance, and its garbage must not pass.
        guard reader.isAtEnd else { throw .corrupt("bytes after the final hashed block") }
        return output
    }

    static func write(_ payload: Data) -> Data {
        var writer = ByteWriter()
        var index: UInt32 = 0
        var offset = payload.startIndex
        while offset < payload.endIndex {
            let end = min(offset + writeBlockSize, payload.endIndex)
            let block = payload[offset..<end]
            writer.write(index)
            writer.write(SHA256.hash(block))
            writer.write(Int32(block.count))
            writer.write(block)
            offset = end
            index += 1
        }
        writer.write(index)
        writer.write(Data(count: 32))
        writer.write(Int32(0))
        return writer.data
    }
}

internal import Foundation
internal import MyPassCore

/// KDBX 4's inner header, the first part of the decrypted payload: the inner random stream and
/// the attachment contents with their protect flags.
struct InnerHeader: Sendable {
    var streamAlgorithm: InnerStreamAlgorithm
    var streamKey: Data
    var binaries: [PooledBinary]

    private enum FieldID: UInt8 {
        case end = 0, streamID = 1, streamKey = 2, binary = 3
    }

    /// The length of the complete inner header at the start of `payload`, or nil if more bytes are
    /// needed. Walks the field sizes without copying anything.
    static func length(of payload: Data) throws(KDBXError) -> Int? {
        var reader = ByteReader(payload, context: "inner header")
        while true {
            guard reader.remainingCount >= 5 else { return nil }
            let identifier = try reader.readUInt8()
            let size = Int(try reader.readInt32())
            guard size >= 0 else { throw .corrupt("inner header field with a negative size") }
            guard reader.remainingCount >= size else { return nil }
            try reader.skip(size)
            if identifier == FieldID.end.rawValue { return reader.consumedCount }
        }
    }

    /// Parses the inner header at the start of `payload`; returns it and the offset of the XML.
    static func parse(_ payload: Data) throws(KDBXError) -> (InnerHeader, xmlStart: Int) {
        var reader = ByteReader(payload, context: "inner header")
        var algorithm: InnerStreamAlgorithm?
        var key: Data?
        var binaries: [PooledBinary] = []
        while true {
            let identifier = try reader.readUInt8()
            let size = try reader.readInt32()
            let data = try reader.readBytes(Int(size))
            switch FieldID(rawValue: identifier) {
            case .end:
                guard let algorithm, let key else { throw .corrupt("inner header without a stream") }
                return (InnerHeader(streamAlgorithm: algorithm, streamKey: key, binaries: binaries),
                        payload.startIndex + reader.consumedCount)
            case .streamID:
                guard data.count == 4 else { throw .corrupt("inner stream ID has length \(data.count)") }
                var idReader = ByteReader(data, context: "inner stream ID")
                let raw = try idReader.readUInt32()
                guard let parsed = InnerStreamAlgorithm(rawValue: raw) else { throw .unsupported("inner random stream \(raw)") }
                algorithm = parsed
            case .streamKey:
                key = data
            case .binary:
                guard let flags = data.first else { throw .corrupt("inner header binary without flags") }
                binaries.append(PooledBinary(data: Data(data.dropFirst()), isProtected: flags & 1 != 0))
            case nil:
                throw .corrupt("unknown inner header field \(identifier)")
            }
        }
    }

    func serialized() -> Data {
        var writer = ByteWriter()
        func field(_ id: FieldID, _ data: Data) {
            writer.write(id.rawValue)
            writer.write(Int32(data.count))
            writer.write(data)
        }
        field(.streamID, streamAlgorithm.rawValue.littleEndianBytes)
        field(.streamKey, streamKey)
        for binary in binaries {
            var data = Data([binary.isProtected ? 1 : 0])
            data.append(binary.data)
            field(.binary, data)
        }
        field(.end, Data())
        return writer.data
    }
}

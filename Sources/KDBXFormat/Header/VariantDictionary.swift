public import Foundation

/// KDBX 4's typed key-value list (KDF parameters, public custom data), kept in file order so that a
/// dictionary read and written again is byte-identical.
public struct VariantDictionary: Sendable, Equatable {
    /// One typed value.
    public enum Value: Sendable, Equatable {
        case uint32(UInt32)
        case uint64(UInt64)
        case bool(Bool)
        case int32(Int32)
        case int64(Int64)
        case string(String)
        case bytes(Data)

        fileprivate var typeByte: UInt8 {
            switch self {
            case .uint32: 0x04
            case .uint64: 0x05
            case .bool: 0x08
            case .int32: 0x0C
            case .int64: 0x0D
            case .string: 0x18
            case .bytes: 0x42
            }
        }
    }

    /// Format version written by this code (major 1, minor 0).
    static let writtenVersion: UInt16 = 0x0100

    /// The items in file order; keys are unique.
    public private(set) var items: [(key: String, value: Value)] = []

    /// An empty dictionary.
    public init() {}

    /// The value stored under `key`.
    public subscript(key: String) -> Value? {
        get { items.first { $0.key == key }?.value }
        set {
            if let index = items.firstIndex(where: { $0.key == key }) {
                if let newValue { items[index].value = newValue } else { items.remove(at: index) }
            } else if let newValue {
                items.append((key, newValue))
            }
        }
    }

    /// Equal when they hold the same items in the same order.
    public static func == (lhs: VariantDictionary, rhs: VariantDictionary) -> Bool {
        lhs.items.count == rhs.items.count
            && zip(lhs.items, rhs.items).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    }

    /// Parses a serialised dictionary; any malformation is `.corrupt`.
    public init(parsing data: Data) throws(KDBXError) {
        var reader = ByteReader(data, context: "variant dictionary")
        let version = try reader.readUInt16()
        guard version >> 8 == 1 else {
            throw .unsupported("variant dictionary version \(version >> 8).\(version & 0xFF)")
        }
        while true {
            let type = try reader.readUInt8()
            if type == 0 { break }
            let keyLength = try reader.readInt32()
            let keyBytes = try reader.readBytes(Int(keyLength))
            guard let key = String(data: keyBytes, encoding: .utf8) else {
                throw .corrupt("variant dictionary key is not UTF-8")
            }
            let valueLength = try reader.readInt32()
            let raw = try reader.readBytes(Int(valueLength))
            let value = try Self.decodeValue(type: type, raw: raw, key: key)
            guard self[key] == nil else { throw .corrupt("variant dictionary repeats key '\(key)'") }
            items.append((key, value))
        }
        guard reader.isAtEnd else { throw .corrupt("bytes after the end of the variant dictionary") }
    }

    /// The serialised form.
    public func serialized() -> Data {
        var writer = ByteWriter()
        writer.write(Self.writtenVersion)
        for (key, value) in items {
            writer.write(value.typeByte)
            let keyBytes = Data(key.utf8)
            writer.write(Int32(keyBytes.count))
            writer.write(keyBytes)
            let raw = Self.encodeValue(value)
            writer.write(Int32(raw.count))
            writer.write(raw)
        }
        writer.write(UInt8(0))
        return writer.data
    }

    private static func decodeValue(type: UInt8, raw: Data, key: String) throws(KDBXError) -> Value {
        var reader = ByteReader(raw, context: "variant dictionary value '\(key)'")
        func expectLength(_ length: Int) throws(KDBXError) {
            guard raw.count == length else {
                throw .corrupt("variant dictionary value '\(key)' has length \(raw.count), expected \(length)")
            }
        }
        switch type {
        case 0x04: try expectLength(4); return .uint32(try reader.readUInt32())
        case 0x05: try expectLength(8); return .uint64(try reader.readUInt64())
        case 0x08: try expectLength(1); return .bool(try reader.readUInt8() != 0)
        case 0x0C: try expectLength(4); return .int32(try reader.readInt32())
        case 0x0D: try expectLength(8); return .int64(Int64(bitPattern: try reader.readUInt64()))
        case 0x18:
            guard let text = String(data: raw, encoding: .utf8) else {
                throw .corrupt("variant dictionary string '\(key)' is not UTF-8")
            }
            return .string(text)
        case 0x42: return .bytes(raw)
        default: throw .corrupt("variant dictionary value '\(key)' has unknown type 0x\(String(type, radix: 16))")
        }
    }

    private static func encodeValue(_ value: Value) -> Data {
        var writer = ByteWriter()
        switch value {
        case .uint32(let number): writer.write(number)
        case .uint64(let number): writer.write(number)
        case .bool(let flag): writer.write(UInt8(flag ? 1 : 0))
        case .int32(let number): writer.write(number)
        case .int64(let number): writer.write(UInt64(bitPattern: number))
        case .string(let text): writer.write(Data(text.utf8))
        case .bytes(let bytes): writer.write(bytes)
        }
        return writer.data
    }
}

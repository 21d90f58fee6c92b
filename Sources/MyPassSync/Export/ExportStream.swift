internal import Foundation
internal import KDBXFormat
internal import MyPassCore

/// Writes `export --format json` as it goes: exactly the text `JSONText.encode(ExportDocument(...))`
/// gives, without building the whole document (at 100,000 entries that took 2.7 GB and longer than
/// linear time). The entries, nearly all of the text, are written straight into bytes
/// (`PrettyJSONBuffer.entry`) and handed on in pieces of about 64 KB; the few other values go
/// through `JSONEncoder` and are spliced in at their depth: every newline of its pretty output is
/// structural (strings escape theirs), so indenting each non-empty line reproduces the nested layout.
struct ExportStream {
    /// Bytes of entries collected before they are handed to `emit`.
    static let pieceSize = 1 << 16
    private let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()
    /// Receives the text in order.
    let emit: (String) -> Void

    /// The document for `opened` (keys in sorted order, as the encoder sorts them), then a newline.
    func write(_ opened: OpenedVault) throws {
        let document = ExportDocument(shallow: opened)
        emit("{\n")
        emit(try member("deletedObjects", encoded(document.deletedObjects, depth: 1), depth: 1) + ",\n")
        emit(try member("format", encoded(document.format, depth: 1), depth: 1) + ",\n")
        emit(try member("meta", encoded(document.meta, depth: 1), depth: 1) + ",\n")
        emit(Self.indent(1) + "\"root\" : ")
        try writeGroup(opened.vault.root, pool: opened.vault.binaries, depth: 1)
        emit(",\n" + (try member("schema", encoded(document.schema, depth: 1), depth: 1)) + "\n}\n")
    }

    /// A group object whose opening brace goes at the current position, at nesting `depth`.
    private func writeGroup(_ group: Group, pool: BinaryPool, depth: Int) throws {
        emit("{\n" + Self.indent(depth + 1) + "\"entries\" : ")
        var buffer = PrettyJSONBuffer()
        var entries = buffer.openArray(depth: depth + 1)
        for entry in group.entries {
            buffer.element(of: &entries)
            buffer.entry(entry, pool: pool, depth: depth + 2, includeHistory: true)
            if buffer.bytes.count >= Self.pieceSize { buffer.drain { emit(String(decoding: $0, as: UTF8.self)) } }
        }
        buffer.closeArray(entries)
        buffer.drain { emit(String(decoding: $0, as: UTF8.self)) }
        emit(",\n" + Self.indent(depth + 1) + "\"groups\" : ")
        if group.groups.isEmpty {
            emit("[\n\n" + Self.indent(depth + 1) + "]")
        } else {
            emit("[\n")
            for (index, child) in group.groups.enumerated() {
                emit(Self.indent(depth + 2))
                try writeGroup(child, pool: pool, depth: depth + 2)
                emit(index == group.groups.count - 1 ? "\n" : ",\n")
            }
            emit(Self.indent(depth + 1) + "]")
        }
        var rest = PrettyJSONBuffer()
        var members = PrettyJSONBuffer.Container(depth: depth, count: 2)  // after "entries" and "groups"
        rest.member("name", of: &members)
        rest.string(group.name)
        rest.member("notes", of: &members)
        rest.string(group.notes)
        rest.member("times", of: &members)
        rest.times(group.times, depth: depth + 1)
        rest.member("uuid", of: &members)
        rest.string(group.uuid.canonicalString)
        rest.closeObject(members)
        rest.drain { emit(String(decoding: $0, as: UTF8.self)) }
    }

    private func member(_ key: String, _ value: String, depth: Int) -> String {
        Self.indent(depth) + "\"" + key + "\" : " + value
    }

    /// `value` pretty-printed for a place at nesting `depth` (its first line at the current position).
    private func encoded(_ value: some Encodable, depth: Int) throws -> String {
        let json = try encoder.encode(value)
        guard depth > 0 else { return String(decoding: json, as: UTF8.self) }
        // Byte by byte: a newline followed by anything but another newline gets the padding.
        let padding = Array(Self.indent(depth).utf8)
        var output: [UInt8] = []
        output.reserveCapacity(json.count + json.count / 8)
        json.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
            var lineStart = 0
            for index in 0..<bytes.count where bytes[index] == UInt8(ascii: "\n") {
                output.append(contentsOf: bytes[lineStart...index])
                if index + 1 < bytes.count && bytes[index + 1] != UInt8(ascii: "\n") { output.append(contentsOf: padding) }
                lineStart = index + 1
            }
            output.append(contentsOf: bytes[lineStart...])
        }
        return String(decoding: output, as: UTF8.self)
    }

    private static func indent(_ depth: Int) -> String {
        String(repeating: "  ", count: depth)
    }
}

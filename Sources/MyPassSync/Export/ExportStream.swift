internal import Foundation
internal import SyncFiles
internal import SyncState
internal import SyncCommit
internal import SyncWatch
internal import SyncRemote
internal import KDBXFormat
internal import MyPassCore

/// Writes `export --format json` as it goes: exactly the text `JSONText.encode(ExportDocument(...))`
/// gives, without building the whole document (at 100,000 entries that took 2.7 GB and longer than
/// linear time). The entries, nearly all of the text, are written straight into bytes
/// (`PrettyJSONBuffer.entry`), batches of them on all cores at once, and handed on in order; the few
/// other values go through `JSONEncoder` and are spliced in at their depth: every newline of its
/// pretty output is structural (strings escape theirs), so indenting each non-empty line reproduces
/// the nested layout.
struct ExportStream {
    /// Entries one task encodes.
    static let batchSize = 128
    /// Batches encoded at once before they are handed on (bounds the memory to a few megabytes).
    static let batchesPerRound = 2 * ProcessInfo.processInfo.activeProcessorCount
    private let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()
    /// Receives the text in order, as UTF-8 (a piece may end inside a character).
    let emitBytes: (UnsafeRawBufferPointer) -> Void

    /// A stream handing its text to `emitBytes`.
    init(emitBytes: @escaping (UnsafeRawBufferPointer) -> Void) {
        self.emitBytes = emitBytes
    }

    /// A stream handing its text to `emit` as strings (each piece whole characters).
    init(emit: @escaping (String) -> Void) {
        self.init { emit(String(decoding: $0, as: UTF8.self)) }
    }

    private func emit(_ text: String) {
        var text = text
        text.withUTF8 { emitBytes(UnsafeRawBufferPointer($0)) }
    }

    private func emit(_ buffer: inout PrettyJSONBuffer) {
        buffer.drain { bytes in bytes.withUnsafeBytes { emitBytes($0) } }
    }

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
        try writeEntries(group.entries, pool: pool, depth: depth + 1)
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
        emit(&rest)
    }

    /// The value of an `entries` member at `depth`: batches of entries encoded in parallel, each
    /// into its own buffer (its commas placed by the entries' positions), handed on in order.
    private func writeEntries(_ entries: [Entry], pool: BinaryPool, depth: Int) throws {
        var opening = PrettyJSONBuffer()
        _ = opening.openArray(depth: depth)  // The container: made per batch below (positions from the entries' indices).
        emit(&opening)
        let batches = stride(from: 0, to: entries.count, by: Self.batchSize).map { $0..<min($0 + Self.batchSize, entries.count) }
        for round in stride(from: 0, to: batches.count, by: Self.batchesPerRound) {
            let current = Array(batches[round..<min(round + Self.batchesPerRound, batches.count)])
            let encoded = ParallelSlots<PrettyJSONBuffer>(count: current.count)
            DispatchQueue.concurrentPerform(iterations: current.count) { index in
                var buffer = PrettyJSONBuffer()
                var position = PrettyJSONBuffer.Container(depth: depth, count: current[index].lowerBound)
                for entry in entries[current[index]] {
                    buffer.element(of: &position)
                    buffer.entry(entry, pool: pool, depth: depth + 1, includeHistory: true)
                }
                encoded.set(buffer, at: index)
            }
            for index in current.indices {
                var buffer = encoded.take(index) ?? PrettyJSONBuffer()
                emit(&buffer)
            }
        }
        var closing = PrettyJSONBuffer()
        closing.closeArray(PrettyJSONBuffer.Container(depth: depth, count: entries.count))
        emit(&closing)
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

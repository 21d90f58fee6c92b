internal import SyncFiles
internal import SyncState
internal import SyncCommit
internal import SyncWatch
internal import SyncRemote
/// JSON text written straight into bytes, laid out exactly as `JSONText.encode` lays it out
/// (`JSONEncoder` pretty-printed, sorted keys, slashes unescaped): two spaces per level,
/// `"key" : value`, an empty array or object as an opening bracket, an empty line and the closing
/// one. The export writes its entries this way: `JSONEncoder` took about two thirds of an export.
struct PrettyJSONBuffer: Sendable {
    /// The text so far, as UTF-8.
    private(set) var bytes: [UInt8] = []

    /// Hands the text so far to `body` and starts again (the buffer keeps its capacity).
    mutating func drain(_ body: ([UInt8]) -> Void) {
        body(bytes)
        bytes.removeAll(keepingCapacity: true)
    }

    /// Raw ASCII text (structure only, never a value).
    mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    /// A line break and the indentation of `depth`.
    mutating func newline(depth: Int) {
        bytes.append(UInt8(ascii: "\n"))
        bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: depth * 2))
    }

    /// `value` as a JSON string: quotes, backslashes and control characters escaped, the rest as is.
    mutating func string(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { utf8 in
            var start = 0
            for index in 0..<utf8.count {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<index]))
                appendEscaped(byte)
                start = index + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// An integer.
    mutating func number(_ value: some BinaryInteger) {
        bytes.append(contentsOf: String(value).utf8)
    }

    /// `null`.
    mutating func null() {
        raw("null")
    }

    /// An object or array being written: its nesting depth and how many members it has so far.
    struct Container {
        let depth: Int
        fileprivate(set) var count: Int

        /// A container at `depth` that already has `count` members (written by other means).
        init(depth: Int, count: Int = 0) {
            self.depth = depth
            self.count = count
        }
    }

    /// Opens an object at nesting `depth`; `member` adds to it, `close` ends it.
    mutating func openObject(depth: Int) -> Container {
        raw("{")
        return Container(depth: depth)
    }

    /// Opens an array at nesting `depth`; `element` adds to it, `close` ends it.
    mutating func openArray(depth: Int) -> Container {
        raw("[")
        return Container(depth: depth)
    }

    /// Starts member `key` of `object`; the value is written next (nested values at `object.depth + 1`).
    mutating func member(_ key: String, of object: inout Container) {
        element(of: &object)
        string(key)
        raw(" : ")
    }

    /// Starts the next element of `array` (or member of an object, before its key).
    mutating func element(of container: inout Container) {
        if container.count > 0 { raw(",") }
        container.count += 1
        newline(depth: container.depth + 1)
    }

    /// Ends an object (an empty one gets the empty line `JSONEncoder` writes).
    mutating func closeObject(_ object: Container) {
        close(object)
        raw("}")
    }

    /// Ends an array (an empty one gets the empty line `JSONEncoder` writes).
    mutating func closeArray(_ array: Container) {
        close(array)
        raw("]")
    }

    private mutating func close(_ container: Container) {
        if container.count == 0 { raw("\n") }
        newline(depth: container.depth)
    }

    private mutating func appendEscaped(_ byte: UInt8) {
        bytes.append(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
        case 0x08: bytes.append(UInt8(ascii: "b"))
        case 0x09: bytes.append(UInt8(ascii: "t"))
        case 0x0A: bytes.append(UInt8(ascii: "n"))
        case 0x0C: bytes.append(UInt8(ascii: "f"))
        case 0x0D: bytes.append(UInt8(ascii: "r"))
        default:
            let hex = Array("0123456789abcdef".utf8)
            bytes.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 15)]])
        }
    }
}

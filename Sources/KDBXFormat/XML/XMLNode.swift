internal import Foundation
internal import MyPassCore

/// An element of the vault document held while its enclosing entry, group or Meta is being read.
/// Entries and groups are converted to model values as soon as they end, so only one entry's nodes
/// exist at a time.
final class XMLNode {
    let name: String
    let attributes: [(name: String, value: String)]
    var text: [UInt8] = []
    var children: [XMLNode] = []
    /// For `Protected="True"` values: the plain bytes, unmasked in document order.
    var unprotectedBytes: [UInt8]?
    /// Converted `<Entry>` children (of a `<Group>` or `<History>`).
    var entries: [Entry] = []
    /// Converted `<Group>` children (of a `<Group>` or `<Root>`).
    var groups: [Group] = []

    init(name: String, attributes: [(name: String, value: String)]) {
        self.name = name
        self.attributes = attributes
    }

    /// The value of attribute `name`.
    func attribute(_ name: String) -> String? {
        attributes.first { $0.name == name }?.value
    }

    /// Whether `attribute` holds KeePass's true ("True", any case).
    func isTrue(_ attribute: String) -> Bool {
        self.attribute(attribute)?.lowercased() == "true"
    }

    /// The character data as a string.
    var string: String { String(decoding: text, as: UTF8.self) }

    /// The first child called `name`.
    func child(_ name: String) -> XMLNode? {
        children.first { $0.name == name }
    }

    /// This node and everything below it, as preserved XML.
    var preserved: PreservedXML {
        PreservedXML(
            name: name,
            attributes: attributes.map { PreservedXML.Attribute(name: $0.name, value: $0.value) },
            // Whitespace between child elements is indentation, not content.
            text: children.isEmpty || !text.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }) ? string : "",
            children: children.map(\.preserved))
    }
}

/// Decoding of KeePass's XML value conventions; every malformed value is `.corrupt`.
enum XMLValue {
    static func bool(_ node: XMLNode) throws(KDBXError) -> Bool {
        switch node.string.lowercased() {
        case "true": return true
        case "false", "": return false
        default: throw .corrupt("\(node.name): '\(node.string)' is not a boolean")
        }
    }

    /// KeePass's nullable boolean: "null" (or empty) is nil.
    static func optionalBool(_ node: XMLNode) throws(KDBXError) -> Bool? {
        switch node.string.lowercased() {
        case "null", "": return nil
        default: return try bool(node)
        }
    }

    static func int(_ node: XMLNode) throws(KDBXError) -> Int64 {
        let text = node.string.trimmingCharacters(in: .whitespaces)
        guard let value = Int64(text) else { throw .corrupt("\(node.name): '\(text)' is not a number") }
        return value
    }

    /// A UUID in base64; the all-zero UUID and an empty element are nil.
    static func optionalUUID(_ node: XMLNode) throws(KDBXError) -> UUID? {
        if node.text.isEmpty { return nil }
        guard let data = Data(base64Encoded: node.string), let uuid = UUID(bytes: data) else {
            throw .corrupt("\(node.name): not a base64 UUID")
        }
        return uuid == zeroUUID ? nil : uuid
    }

    /// A required UUID.
    static func uuid(_ node: XMLNode) throws(KDBXError) -> UUID {
        guard let data = Data(base64Encoded: node.string), let uuid = UUID(bytes: data) else {
            throw .corrupt("\(node.name): not a base64 UUID")
        }
        return uuid
    }

    static let zeroUUID = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))

    /// A time: base64 of little-endian seconds since year one (KDBX 4) or ISO 8601 (KDBX 3.1).
    static func time(_ node: XMLNode) throws(KDBXError) -> Timestamp {
        let text = node.string
        if let parsed = Timestamp(iso8601: text) { return parsed }
        guard let data = Data(base64Encoded: text), data.count == 8 else {
            throw .corrupt("\(node.name): '\(text)' is not a KeePass time")
        }
        var seconds: Int64 = 0
        for (index, byte) in data.enumerated() { seconds |= Int64(byte) << (8 * index) }
        return Timestamp(secondsSinceYearOne: seconds)
    }

    static func base64(_ node: XMLNode) throws(KDBXError) -> Data {
        if node.text.isEmpty { return Data() }
        guard let data = Data(base64Encoded: node.string) else {
            throw .corrupt("\(node.name): invalid base64")
        }
        return data
    }

    /// KeePass tag lists are separated by ';' or ','.
    static func tags(_ node: XMLNode) -> [String] {
        node.string.split(whereSeparator: { $0 == ";" || $0 == "," })
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}

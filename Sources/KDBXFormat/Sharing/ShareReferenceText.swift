public import Foundation
public import MyPassCore

/// KeePassXC's KeeShare reference as it sits in a group's custom data: base64 of a small XML
/// document (`<KeeShare><Type>…</Type><Group>…</Group><Path>…</Path><Password>…</Password></KeeShare>`)
/// whose `Group` (the reference's UUID), `Path` and `Password` are base64 themselves. Read with the
/// strict libxml2 parser, written with libxml2's writer.
public enum ShareReferenceText {
    /// The longest reference text read (a path and a password; KeePassXC's are a few hundred bytes).
    public static let maximumLength = 64 * 1024

    /// Why a reference could not be read (never its content: it holds a password).
    public enum Failure: Error, Equatable, Sendable, CustomStringConvertible {
        case tooLong
        case notBase64
        case notAReference
        case noPath

        public var description: String {
            switch self {
            case .tooLong: "the KeeShare reference is longer than \(ShareReferenceText.maximumLength) bytes"
            case .notBase64: "the KeeShare reference is not base64"
            case .notAReference: "the KeeShare reference is not KeePassXC's reference document"
            case .noPath: "the KeeShare reference names no container"
            }
        }
    }

    /// The reference `text` (the custom-data value) holds.
    public static func decode(_ text: String) throws(Failure) -> ShareReference {
        guard text.utf8.count <= maximumLength else { throw .tooLong }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let document = Base64.decode(Array(trimmed.utf8)) else { throw .notBase64 }
        let reader = ReferenceReader()
        do {
            try StrictXMLParser.parse(Data(document), handler: reader)
        } catch {
            throw .notAReference
        }
        guard reader.sawRoot else { throw .notAReference }
        let identifier = reader.values["Group"].flatMap { decodedText($0) }.flatMap(uuid(fromBase64Bytes:)) ?? UUID()
        guard let path = reader.values["Path"].flatMap(decodedString), !path.isEmpty else { throw .noPath }
        let password = reader.values["Password"].flatMap(decodedString) ?? ""
        let mode: ShareMode = switch (reader.types.contains("Import"), reader.types.contains("Export")) {
        case (true, true): .synchronizing
        case (true, false): .importing
        case (false, true): .exporting
        case (false, false): .inactive
        }
        return ShareReference(mode: mode, identifier: identifier, containerPath: path, password: ProtectedValue(password))
    }

    /// The custom-data value KeePassXC reads for `reference`.
    public static func encode(_ reference: ShareReference) throws -> String {
        var document = Data()
        let writer = try XMLStreamWriter(indent: false) { (bytes: UnsafeRawBufferPointer) throws(KDBXError) in
            document.append(contentsOf: bytes)
        }
        writer.start("KeeShare")
        writer.start("Type")
        if reference.mode.imports { writer.start("Import"); writer.end() }
        if reference.mode.exports { writer.start("Export"); writer.end() }
        writer.end()
        writer.element("Group", base64(uuidBytes(reference.identifier)))
        writer.element("Path", base64(Array(reference.containerPath.utf8)))
        let password = reference.password.withRevealedBytes { base64($0) }
        writer.element("Password", password)
        writer.end()
        try writer.finish()
        document.append(UInt8(ascii: "\n"))
        return base64(Array(document))
    }

    private static func base64(_ bytes: [UInt8]) -> String {
        bytes.withUnsafeBytes { Base64.encode($0) }
    }

    private static func decodedText(_ text: String) -> [UInt8]? {
        Base64.decode(Array(text.trimmingCharacters(in: .whitespacesAndNewlines).utf8))
    }

    private static func decodedString(_ text: String) -> String? {
        decodedText(text).flatMap { String(bytes: $0, encoding: .utf8) }
    }

    private static func uuidBytes(_ uuid: UUID) -> [UInt8] {
        withUnsafeBytes(of: uuid.uuid) { Array($0) }
    }

    private static func uuid(fromBase64Bytes bytes: [UInt8]) -> UUID? {
        guard bytes.count == 16 else { return nil }
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }
}

/// Collects the reference document's values: the text of each child of `<KeeShare>` and the
/// element names inside `<Type>`.
private final class ReferenceReader: XMLEventHandler {
    var values: [String: String] = [:]
    var types: Set<String> = []
    var sawRoot = false
    private var path: [String] = []
    private var text = ""

    func startElement(_ name: UnsafePointer<UInt8>, attributes: XMLAttributes) throws(KDBXError) {
        let element = String(cString: name)
        if path.isEmpty {
            guard element == "KeeShare" else { throw .corrupt("not a KeeShare reference") }
            sawRoot = true
        } else if path == ["KeeShare", "Type"] {
            types.insert(element)
        }
        path.append(element)
        text = ""
    }

    func endElement() throws(KDBXError) {
        if path.count == 2, path[1] != "Type" { values[path[1]] = text }
        path.removeLast()
        text = ""
    }

    func characters(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard text.utf8.count < ShareReferenceText.maximumLength else { return }
        text += String(decoding: bytes, as: UTF8.self)
    }
}

internal import Foundation
internal import CLibXML2

/// libxml2's `xmlTextWriter` writing into memory, indented with tabs as KeePass does. Text is escaped
/// by libxml2; characters XML 1.0 cannot carry are dropped first (as KeePass does), so that what is
/// written always parses again.
final class XMLTextWriter {
    private let buffer: xmlBufferPtr
    private let writer: xmlTextWriterPtr
    private var failed = false

    init() throws(KDBXError) {
        guard let buffer = xmlBufferCreate() else { throw .unwritable("XML buffer") }
        guard let writer = xmlNewTextWriterMemory(buffer, 0) else {
            xmlBufferFree(buffer)
            throw .unwritable("XML writer")
        }
        self.buffer = buffer
        self.writer = writer
        check(xmlTextWriterSetIndent(writer, 1))
        check(xmlTextWriterSetIndentString(writer, "\t"))
        check(xmlTextWriterStartDocument(writer, "1.0", "UTF-8", "yes"))
    }

    deinit {
        xmlFreeTextWriter(writer)
        xmlBufferFree(buffer)
    }

    func start(_ name: String) {
        check(xmlTextWriterStartElement(writer, name))
    }

    func end() {
        check(xmlTextWriterEndElement(writer))
    }

    func attribute(_ name: String, _ value: String) {
        check(xmlTextWriterWriteAttribute(writer, name, Self.xmlSafe(value)))
    }

    /// Character data inside the current element.
    func text(_ value: String) {
        guard !value.isEmpty else { return }
        check(xmlTextWriterWriteString(writer, Self.xmlSafe(value)))
    }

    /// `<name>value</name>` (or `<name/>` when empty).
    func element(_ name: String, _ value: String) {
        start(name)
        text(value)
        end()
    }

    /// Finishes the document and returns its bytes.
    func finish() throws(KDBXError) -> Data {
        check(xmlTextWriterEndDocument(writer))
        check(xmlTextWriterFlush(writer))
        guard !failed else { throw .unwritable("XML writer failed") }
        let length = Int(xmlBufferLength(buffer))
        guard let content = xmlBufferContent(buffer) else { return Data() }
        return Data(bytes: content, count: length)
    }

    private func check(_ status: Int32) {
        if status < 0 { failed = true }
    }

    /// `text` without the characters XML 1.0 forbids (controls other than tab, LF, CR; U+FFFE, U+FFFF).
    static func xmlSafe(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isForbidden) else { return text }
        var scalars = String.UnicodeScalarView()
        scalars.append(contentsOf: text.unicodeScalars.filter { !isForbidden($0) })
        return String(scalars)
    }

    private static func isForbidden(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09, 0x0A, 0x0D: false
        case 0..<0x20, 0xFFFE, 0xFFFF: true
        default: false
        }
    }
}

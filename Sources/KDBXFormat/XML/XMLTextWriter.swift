internal import Foundation
internal import CLibXML2

/// libxml2's `xmlTextWriter`, writing through an output buffer whose bytes go to `sink` in pieces
/// as they are produced (so the document is never held whole). Text is escaped by libxml2;
/// characters XML 1.0 cannot carry are dropped first (as KeePass does), so that what is written
/// always parses again. Element names are static strings, passed to libxml2 without conversion.
final class XMLTextWriter {
    /// Receives the document's bytes in order.
    typealias Sink = (UnsafeRawBufferPointer) throws(KDBXError) -> Void

    private let writer: xmlTextWriterPtr
    private var failed = false
    private let sinkBox: SinkBox

    /// Holds the sink and its first error for the C write callback.
    private final class SinkBox {
        let sink: Sink
        var error: KDBXError?
        init(sink: @escaping Sink) { self.sink = sink }
    }

    /// A writer sending the document to `sink`; `indent` formats it with tabs as KeePass does.
    init(indent: Bool, sink: @escaping Sink) throws(KDBXError) {
        sinkBox = SinkBox(sink: sink)
        let context = Unmanaged.passUnretained(sinkBox).toOpaque()
        guard let output = xmlOutputBufferCreateIO(
            { context, bytes, length in
                guard let context, let bytes, length >= 0 else { return -1 }
                let box = Unmanaged<SinkBox>.fromOpaque(context).takeUnretainedValue()
                guard box.error == nil else { return -1 }
                do throws(KDBXError) {
                    try box.sink(UnsafeRawBufferPointer(start: bytes, count: Int(length)))
                } catch {
                    box.error = error
                    return -1
                }
                return length
            },
            { _ in 0 }, context, nil)
        else { throw .unwritable("XML output buffer") }
        guard let writer = xmlNewTextWriter(output) else {
            xmlOutputBufferClose(output)
            throw .unwritable("XML writer")
        }
        self.writer = writer
        if indent {
            check(xmlTextWriterSetIndent(writer, 1))
            check(xmlTextWriterSetIndentString(writer, "\t"))
        }
        check(xmlTextWriterStartDocument(writer, "1.0", "UTF-8", "yes"))
    }

    deinit {
        xmlFreeTextWriter(writer)
    }

    /// Opens element `name`.
    func start(_ name: StaticString) {
        check(xmlTextWriterStartElement(writer, name.utf8Start))
    }

    /// Opens an element whose name is only known at run time (preserved elements).
    func start(named name: String) {
        withXMLString(name) { check(xmlTextWriterStartElement(writer, $0)) }
    }

    func end() {
        check(xmlTextWriterEndElement(writer))
    }

    func attribute(_ name: StaticString, _ value: String) {
        withXMLString(Self.xmlSafe(value)) { check(xmlTextWriterWriteAttribute(writer, name.utf8Start, $0)) }
    }

    /// An attribute whose name is only known at run time (preserved elements).
    func attribute(named name: String, _ value: String) {
        withXMLString(name) { namePointer in
            withXMLString(Self.xmlSafe(value)) { check(xmlTextWriterWriteAttribute(writer, namePointer, $0)) }
        }
    }

    /// Character data inside the current element.
    func text(_ value: String) {
        guard !value.isEmpty else { return }
        withXMLString(Self.xmlSafe(value)) { check(xmlTextWriterWriteString(writer, $0)) }
    }

    /// `<name>value</name>` (or `<name/>` when empty).
    func element(_ name: StaticString, _ value: String) {
        start(name)
        text(value)
        end()
    }

    /// Finishes the document and flushes the rest of it to the sink.
    func finish() throws(KDBXError) {
        check(xmlTextWriterEndDocument(writer))
        check(xmlTextWriterFlush(writer))
        if let error = sinkBox.error { throw error }
        guard !failed else { throw .unwritable("XML writer failed") }
    }

    private func check(_ status: Int32) {
        if status < 0 { failed = true }
    }

    /// Calls `body` with `text` as a NUL-terminated UTF-8 C string (no copy for native strings).
    private func withXMLString(_ text: String, _ body: (UnsafePointer<UInt8>) -> Void) {
        // Native Swift strings keep a NUL after their UTF-8 storage; withCString uses it in place.
        text.withCString { pointer in
            pointer.withMemoryRebound(to: UInt8.self, capacity: 1) { body($0) }
        }
    }

    /// `text` without the characters XML 1.0 forbids (controls other than tab, LF, CR; U+FFFE, U+FFFF).
    static func xmlSafe(_ text: String) -> String {
        // Fast path on the UTF-8 bytes: controls are single bytes, U+FFFE/U+FFFF start with 0xEF.
        var text = text
        let suspicious = text.withUTF8 { bytes in
            for byte in bytes where (byte < 0x20 && byte != 0x09 && byte != 0x0A && byte != 0x0D) || byte == 0xEF {
                return true
            }
            return false
        }
        guard suspicious, text.unicodeScalars.contains(where: isForbidden) else { return text }
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

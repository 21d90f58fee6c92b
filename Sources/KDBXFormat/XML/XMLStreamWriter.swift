internal import Foundation
internal import CLibXML2

/// Writes an XML document through libxml2's output buffer (`xmlOutputBuffer`), whose bytes go to
/// `sink` in pieces as they are produced (the document is never held whole). Character data is
/// escaped by libxml2 (`xmlOutputBufferWriteEscape`), attribute values too (`xmlAttrSerializeTxtContent`);
/// characters XML 1.0 cannot carry are dropped first (as KeePass does), so that what is written always
/// parses again.
///
/// Why not `xmlTextWriter`: it allocates and frees a list node and reformats every element, which made
/// it most of the cost of a save (50 ms of a 1,000-entry vault's 54 ms); the element structure of a
/// KeePass document is fixed, so this writer keeps only a stack of open element names.
/// Confined to one thread at a time, so its hot state is `@exclusivity(unchecked)`: the runtime's
/// access checks otherwise cost about a fifth of an open and up to half of a save (`mypass-bench open`).
final class XMLStreamWriter {
    /// Receives the document's bytes in order.
    typealias Sink = (UnsafeRawBufferPointer) throws(KDBXError) -> Void

    private let output: xmlOutputBufferPtr
    private let sinkBox: SinkBox
    private let indent: Bool
    /// The open elements, innermost last.
    @exclusivity(unchecked) private var open: [OpenElement] = []
    /// `<name` is written but not yet its `>` (attributes may follow).
    @exclusivity(unchecked) private var startTagPending = false
    @exclusivity(unchecked) private var failed = false
    /// Markup and text that needs no escaping, gathered here and handed to the output buffer in
    /// blocks (one libxml2 call per block instead of several per element). A buffer of its own, filled
    /// by `memcpy`: appending to an `Array` a few bytes at a time was an eighth of an XML export.
    private let staged: UnsafeMutablePointer<UInt8>
    @exclusivity(unchecked) private var stagedCount = 0
    private static let stagingCapacity = 16 * 1024

    private struct OpenElement {
        let name: ElementText
        /// Whether a child element was written (its end tag then goes on a line of its own when indenting).
        var hasChildren = false
        /// Whether character data was written (no indentation is added inside mixed content).
        var hasText = false
    }

    /// An element name: a static string (the KeePass schema) or one read from a file (preserved elements).
    private enum ElementText {
        case known(StaticString)
        case preserved(String)
    }

    /// Holds the sink and its first error for the C write callback.
    private final class SinkBox {
        let sink: Sink
        var error: KDBXError?
        init(sink: @escaping Sink) { self.sink = sink }
    }

    /// Whether this writer writes a fragment: elements inside an element another writer opened.
    private let isFragment: Bool

    /// A writer sending the document to `sink`; `indent` formats it with tabs as KeePass does.
    convenience init(indent: Bool, sink: @escaping Sink) throws(KDBXError) {
        try self.init(indent: indent, fragment: false, sink: sink)
        raw("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n")
    }

    /// A writer of a fragment sent to `sink`: elements inside an element another writer opened and
    /// will close (no declaration, no indentation), the same bytes that writer would have written.
    convenience init(fragmentTo sink: @escaping Sink) throws(KDBXError) {
        try self.init(indent: false, fragment: true, sink: sink)
        open.append(OpenElement(name: .known("fragment"), hasChildren: true))
    }

    private init(indent: Bool, fragment: Bool, sink: @escaping Sink) throws(KDBXError) {
        sinkBox = SinkBox(sink: sink)
        self.indent = indent
        isFragment = fragment
        let context = Unmanaged.passUnretained(sinkBox).toOpaque()
        LibXML2Setup.ensure()
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
        self.output = output
        staged = .allocate(capacity: Self.stagingCapacity)
    }

    deinit {
        // Flushes what is left (a no-op after finish) and frees the buffer; the sink box outlives it.
        xmlOutputBufferClose(output)
        staged.deallocate()
    }

    /// Opens element `name`.
    func start(_ name: StaticString) {
        start(.known(name))
    }

    /// Opens an element whose name is only known at run time (preserved elements).
    func start(named name: String) {
        start(.preserved(name))
    }

    /// Closes the innermost open element (`<name/>` when it is empty).
    func end() {
        guard let element = open.popLast() else {
            failed = true
            return
        }
        if startTagPending {
            startTagPending = false
            raw("/>")
            return
        }
        if indent && element.hasChildren && !element.hasText { newLine(depth: open.count) }
        raw("</")
        write(element.name)
        raw(">")
    }

    /// An attribute of the element just opened.
    func attribute(_ name: StaticString, _ value: String) {
        attribute(.known(name), value)
    }

    /// An attribute whose name is only known at run time (preserved elements).
    func attribute(named name: String, _ value: String) {
        attribute(.preserved(name), value)
    }

    /// Character data inside the current element.
    func text(_ value: String) {
        guard !value.isEmpty, !open.isEmpty else { return }
        closeStartTag()
        open[open.count - 1].hasText = true
        var value = value
        let plain = value.withUTF8 { bytes -> Bool in
            // Text without markup characters, CR or characters to drop is written as it is; other text
            // is escaped by libxml2.
            for byte in bytes where byte == UInt8(ascii: "<") || byte == UInt8(ascii: ">") || byte == UInt8(ascii: "&")
                || byte < 0x20 || byte == 0xEF {
                if byte == 0x09 || byte == 0x0A { continue }
                return false
            }
            stage(bytes.baseAddress!, bytes.count)
            return true
        }
        if plain { return }
        flushStaged()
        withXMLString(Self.xmlSafe(value)) { check(xmlOutputBufferWriteEscape(output, $0, nil)) }
    }

    /// Elements a fragment writer (`init(fragmentTo:)`) wrote for the innermost open element,
    /// handed to the sink as they are, after what this writer has written so far.
    func insertFragment(_ bytes: UnsafeRawBufferPointer) {
        guard !open.isEmpty, !indent else {
            failed = true
            return
        }
        closeStartTag()
        open[open.count - 1].hasChildren = true
        flushStaged()
        check(xmlOutputBufferFlush(output))
        guard sinkBox.error == nil, !bytes.isEmpty else { return }
        do throws(KDBXError) { try sinkBox.sink(bytes) } catch { sinkBox.error = error }
    }

    /// `<name>value</name>` (or `<name/>` when empty).
    func element(_ name: StaticString, _ value: String) {
        start(name)
        text(value)
        end()
    }

    /// Finishes the document and flushes the rest of it to the sink.
    func finish() throws(KDBXError) {
        if open.count != (isFragment ? 1 : 0) { failed = true }
        if !isFragment { raw("\n") }
        flushStaged()
        check(xmlOutputBufferFlush(output))
        if let error = sinkBox.error { throw error }
        guard !failed else { throw .unwritable("XML writer failed") }
    }

    // MARK: Pieces

    private func start(_ name: ElementText) {
        closeStartTag()
        if !open.isEmpty { open[open.count - 1].hasChildren = true }
        if indent && !open.isEmpty && !open[open.count - 1].hasText { newLine(depth: open.count) }
        raw("<")
        write(name)
        open.append(OpenElement(name: name))
        startTagPending = true
    }

    private func attribute(_ name: ElementText, _ value: String) {
        guard startTagPending else {
            failed = true
            return
        }
        raw(" ")
        write(name)
        raw("=\"")
        var safe = Self.xmlSafe(value)
        if safe.utf8.allSatisfy({ $0.isASCIIAlphanumeric }) {
            safe.withUTF8 { if let start = $0.baseAddress { stage(start, $0.count) } }
        } else {
            flushStaged()
            guard let buffer = xmlBufferCreate() else {
                failed = true
                return
            }
            defer { xmlBufferFree(buffer) }
            withXMLString(safe) { xmlAttrSerializeTxtContent(buffer, nil, nil, $0) }
            check(xmlOutputBufferWrite(output, xmlBufferLength(buffer), xmlBufferContent(buffer)))
        }
        raw("\"")
    }

    private func closeStartTag() {
        guard startTagPending else { return }
        startTagPending = false
        raw(">")
    }

    private func newLine(depth: Int) {
        // A line break and the tabs of up to 16 levels, staged in one copy.
        let lineBreakAndTabs: StaticString = "\n\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t"
        let most = lineBreakAndTabs.utf8CodeUnitCount - 1
        stage(lineBreakAndTabs.utf8Start, 1 + min(depth, most))
        for _ in most..<max(depth, most) { raw("\t") }
    }

    private func write(_ name: ElementText) {
        switch name {
        case .known(let name): raw(name)
        case .preserved(var name): name.withUTF8 { if let start = $0.baseAddress { stage(start, $0.count) } }
        }
    }

    /// Markup of this writer (ASCII, nothing to escape).
    private func raw(_ markup: StaticString) {
        stage(markup.utf8Start, markup.utf8CodeUnitCount)
    }

    /// Adds `count` bytes at `bytes` to the staged block; a piece larger than the block goes to the
    /// output buffer directly, after what is staged.
    @inline(__always)
    private func stage(_ bytes: UnsafePointer<UInt8>, _ count: Int) {
        if stagedCount + count > Self.stagingCapacity {
            flushStaged()
            if count > Self.stagingCapacity {
                bytes.withMemoryRebound(to: CChar.self, capacity: count) { check(xmlOutputBufferWrite(output, Int32(count), $0)) }
                return
            }
        }
        (staged + stagedCount).initialize(from: bytes, count: count)
        stagedCount += count
    }

    /// Hands the gathered bytes to libxml2's output buffer.
    private func flushStaged() {
        guard stagedCount > 0 else { return }
        staged.withMemoryRebound(to: CChar.self, capacity: stagedCount) { check(xmlOutputBufferWrite(output, Int32(stagedCount), $0)) }
        stagedCount = 0
    }

    private func check(_ status: Int32) {
        if status < 0 { failed = true }
    }

    /// Calls `body` with `text` as a NUL-terminated UTF-8 C string (no copy for native strings).
    private func withXMLString<Result>(_ text: String, _ body: (UnsafePointer<UInt8>) -> Result) -> Result {
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

private extension UInt8 {
    var isASCIIAlphanumeric: Bool {
        (0x30...0x39).contains(self) || (0x41...0x5A).contains(self) || (0x61...0x7A).contains(self)
    }
}

internal import Foundation
internal import CLibXML2

/// The attributes of a start tag, as libxml2 hands them over (valid during the callback only).
struct XMLAttributes {
    fileprivate let count: Int
    fileprivate let pointers: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?

    var isEmpty: Bool { count == 0 }

    /// Calls `body` with each attribute's name and raw value bytes.
    func forEach(_ body: (UnsafePointer<UInt8>, UnsafeBufferPointer<UInt8>) throws(KDBXError) -> Void) throws(KDBXError) {
        guard let pointers else { return }
        for index in 0..<count {
            // Five pointers per attribute: local name, prefix, URI, value start, value end.
            guard let name = pointers[index * 5], let start = pointers[index * 5 + 3],
                  let end = pointers[index * 5 + 4] else { continue }
            try body(name, UnsafeBufferPointer(start: start, count: end - start))
        }
    }
}

/// Receives the events of `StrictXMLParser` in document order.
protocol XMLEventHandler: AnyObject {
    /// An element starts. Throwing stops the parse with that error.
    func startElement(_ name: UnsafePointer<UInt8>, attributes: XMLAttributes) throws(KDBXError)
    /// The innermost open element ends.
    func endElement() throws(KDBXError)
    /// Character data inside the innermost open element (may arrive in several pieces).
    func characters(_ bytes: UnsafeBufferPointer<UInt8>)
}

/// libxml2's SAX2 parser, made strict: any well-formedness error is fatal (no recovery), a
/// DOCTYPE, entity declaration or entity reference is rejected, no network access, and nesting is
/// capped. The document can be pushed in pieces as it is decompressed, or pulled by libxml2 from a
/// source of pieces (`init(handler:pulling:)`, `parseAll`).
/// Confined to one thread at a time, so its hot state is `@exclusivity(unchecked)`: the runtime's
/// access checks otherwise cost about a fifth of an open and up to half of a save (`mypass-bench open`).
final class StrictXMLParser {
    /// Deepest element nesting accepted (KeePass documents nest groups; 1000 levels is far beyond use).
    static let maximumDepth = 1000

    /// Held strongly (no handler holds its parser): a `let` is used in place by every callback,
    /// where an `unowned(unsafe)` reference was retained and released for each event.
    private let handler: any XMLEventHandler
    /// The handler again when it is the recorder, which takes the events of every vault read: it is
    /// then called directly (its calls inlined into the callbacks) rather than through the protocol,
    /// whose indirection took a tenth of the parsing thread's own work. Unmanaged (`handler` holds
    /// it), so that no event retains and releases it.
    private let recorder: Unmanaged<XMLEventRecorder>?
    @exclusivity(unchecked) private var failure: KDBXError? {
        didSet { hasFailed = failure != nil }
    }
    /// `failure != nil`, kept apart because the hot callbacks test it millions of times.
    @exclusivity(unchecked) private var hasFailed = false
    @exclusivity(unchecked) private var depth = 0
    @exclusivity(unchecked) private var context: xmlParserCtxtPtr?

    /// Where a pulling parser takes its input (`init(handler:pulling:)`): the next piece, nil at the end.
    private let source: (() -> [UInt8]?)?
    @exclusivity(unchecked) private var piece: [UInt8] = []
    @exclusivity(unchecked) private var pieceOffset = 0
    /// Whether a pulling parser has met the end of its input.
    @exclusivity(unchecked) private(set) var reachedEndOfInput = false

    /// A parser delivering events to `handler`, fed with `feed` (push).
    convenience init(handler: any XMLEventHandler) throws(KDBXError) {
        try self.init(handler: handler, source: nil)
    }

    /// A parser delivering events to `handler` that takes its input from `source` as it needs it
    /// (`parseAll`). Pulling spares libxml2 the look-ahead a pushed parser does before each markup
    /// (a tenth of its time on a KeePassXC document).
    convenience init(handler: any XMLEventHandler, pulling source: @escaping () -> [UInt8]?) throws(KDBXError) {
        try self.init(handler: handler, source: source)
    }

    private init(handler: any XMLEventHandler, source: (() -> [UInt8]?)?) throws(KDBXError) {
        self.handler = handler
        self.recorder = (handler as? XMLEventRecorder).map { Unmanaged.passUnretained($0) }
        self.source = source
        // Errors raised without a parser context (character encoding) go to this thread's structured
        // handler instead of libxml2's default, which prints them, with bytes of the document, on stderr.
        xmlSetStructuredErrorFunc(nil) { _, _ in }
        var sax = xmlSAXHandler()
        sax.initialized = UInt32(XML_SAX2_MAGIC)
        sax.startElementNs = { context, localName, _, _, _, _, attributeCount, _, attributes in
            StrictXMLParser.with(context) { $0.didStart(localName, attributeCount, attributes) }
        }
        sax.endElementNs = { context, _, _, _ in
            StrictXMLParser.with(context) { $0.didEnd() }
        }
        sax.characters = { context, bytes, length in
            StrictXMLParser.with(context) { $0.didRead(bytes, length) }
        }
        // Whitespace goes to the same callback, which tells libxml2 not to classify each run of it
        // (without a tree, every run went to `characters` anyway).
        sax.ignorableWhitespace = sax.characters
        sax.cdataBlock = { context, bytes, length in
            StrictXMLParser.with(context) { $0.didRead(bytes, length) }
        }
        sax.internalSubset = { context, _, _, _ in
            StrictXMLParser.from(context).fail(.corrupt("XML: a DOCTYPE is not allowed"))
        }
        sax.entityDecl = { context, _, _, _, _, _ in
            StrictXMLParser.from(context).fail(.corrupt("XML: entity declarations are not allowed"))
        }
        sax.reference = { context, _ in
            StrictXMLParser.from(context).fail(.corrupt("XML: entity references are not allowed"))
        }
        sax.serror = { context, error in
            guard let context else { return }
            let message = error.flatMap { $0.pointee.message }.map { String(cString: $0) }
            let line = error.map { Int($0.pointee.line) } ?? 0
            var text = (message ?? "parse error").trimmingCharacters(in: .whitespacesAndNewlines)
            // Never quote document bytes (they may be a user's data) in an error message.
            if let quoted = text.range(of: ", bytes 0x") { text = String(text[..<quoted.lowerBound]) }
            Unmanaged<StrictXMLParser>.fromOpaque(context).takeUnretainedValue()
                .fail(.corrupt("XML line \(line): \(text)"))
        }
        let selfPointer = Unmanaged.passUnretained(self).toOpaque()
        LibXML2Setup.ensure()
        let created: xmlParserCtxtPtr?
        if source == nil {
            created = xmlCreatePushParserCtxt(&sax, selfPointer, nil, 0, nil)
        } else {
            created = xmlCreateIOParserCtxt(&sax, selfPointer, { context, buffer, length in
                Unmanaged<StrictXMLParser>.fromOpaque(context!).takeUnretainedValue().read(into: buffer, length)
            }, nil, selfPointer, XML_CHAR_ENCODING_NONE)
        }
        guard let context = created else {
            throw .corrupt("XML: parser could not be created")
        }
        self.context = context
        let options = Int32(XML_PARSE_NONET.rawValue | XML_PARSE_HUGE.rawValue | XML_PARSE_NOCDATA.rawValue)
        xmlCtxtUseOptions(context, options)
    }

    deinit {
        if let context { xmlFreeParserCtxt(context) }
    }

    /// Parses all of `document` (fed in 4 MiB pieces).
    static func parse(_ document: Data, handler: any XMLEventHandler) throws(KDBXError) {
        let parser = try StrictXMLParser(handler: handler)
        let chunkSize = 4 << 20
        var offset = document.startIndex
        while offset < document.endIndex {
            let end = min(offset + chunkSize, document.endIndex)
            try parser.feed(document[offset..<end])
            offset = end
        }
        try parser.finish()
    }

    /// Parses the next piece of the document.
    func feed(_ bytes: some ContiguousBytes) throws(KDBXError) {
        guard let context else { throw .corrupt("XML: parser already finished") }
        let status: Int32 = bytes.withUnsafeBytes { buffer in
            guard let base = buffer.bindMemory(to: CChar.self).baseAddress, buffer.count > 0 else { return 0 }
            var offset = 0
            var result: Int32 = 0
            // xmlParseChunk takes an int length.
            while offset < buffer.count && result == 0 && failure == nil {
                let length = min(buffer.count - offset, Int(Int32.max))
                result = xmlParseChunk(context, base + offset, Int32(length), 0)
                offset += length
            }
            return result
        }
        if let failure { throw failure }
        guard status == 0 else { throw .corrupt("XML document is not well-formed") }
    }

    /// Parses the whole document a pulling parser takes from its source; throws if it is incomplete
    /// or not well-formed.
    func parseAll() throws(KDBXError) {
        guard let context, source != nil else { throw .corrupt("XML: not a pulling parser") }
        let status = xmlParseDocument(context)
        if let failure { throw failure }
        guard status == 0, context.pointee.wellFormed != 0 else { throw .corrupt("XML document is not well-formed") }
        guard depth == 0 else { throw .corrupt("XML document ends inside an element") }
        // libxml2 takes a NUL byte after the document element for the end of its input: whatever it
        // left unread, or the source still holds, is content after the document (a pushed parser
        // refuses it too), and the source is read to its end so that its producer never waits.
        if let input = context.pointee.input, let current = input.pointee.cur, let end = input.pointee.end, current < end {
            throw .corrupt("XML: content after the end of the document")
        }
        guard pieceOffset == piece.count, nextPiece() == nil else { throw .corrupt("XML: content after the end of the document") }
    }

    /// The next non-empty piece of the source into `piece`; nil (and `reachedEndOfInput`) at its end.
    private func nextPiece() -> [UInt8]? {
        guard let source else { return nil }
        while let next = source() {
            guard !next.isEmpty else { continue }
            piece = next
            pieceOffset = 0
            return next
        }
        reachedEndOfInput = true
        return nil
    }

    /// libxml2's read callback: copies the next bytes of the source into `buffer`, filling it across
    /// pieces (libxml2 detects the encoding and a byte-order mark only in a first read of at least
    /// four bytes); 0 at the end.
    private func read(into buffer: UnsafeMutablePointer<CChar>?, _ length: Int32) -> Int32 {
        guard let buffer, length > 0, !hasFailed else { return 0 }
        var copied = 0
        while copied < Int(length) {
            if pieceOffset == piece.count && nextPiece() == nil { break }
            let count = min(Int(length) - copied, piece.count - pieceOffset)
            piece.withUnsafeBytes { bytes in
                (UnsafeMutableRawPointer(buffer) + copied).copyMemory(from: bytes.baseAddress! + pieceOffset, byteCount: count)
            }
            pieceOffset += count
            copied += count
        }
        return Int32(copied)
    }

    /// Ends the document; throws if it is incomplete or not well-formed.
    func finish() throws(KDBXError) {
        guard let context else { throw .corrupt("XML: parser already finished") }
        let status = xmlParseChunk(context, nil, 0, 1)
        if let failure { throw failure }
        guard status == 0, context.pointee.wellFormed != 0 else { throw .corrupt("XML document is not well-formed") }
        guard depth == 0 else { throw .corrupt("XML document ends inside an element") }
    }

    private static func from(_ context: UnsafeMutableRawPointer?) -> StrictXMLParser {
        Unmanaged<StrictXMLParser>.fromOpaque(context!).takeUnretainedValue()
    }

    /// Calls `body` with the parser behind a callback's context without retaining it (the parser
    /// outlives every callback of its own parse).
    private static func with(_ context: UnsafeMutableRawPointer?, _ body: (StrictXMLParser) -> Void) {
        Unmanaged<StrictXMLParser>.fromOpaque(context!)._withUnsafeGuaranteedRef(body)
    }

    private func fail(_ error: KDBXError) {
        if failure == nil { failure = error }
        if let context { xmlStopParser(context) }
    }

    private func didStart(
        _ localName: UnsafePointer<xmlChar>?, _ attributeCount: Int32,
        _ attributes: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?
    ) {
        guard !hasFailed, let localName else { return }
        depth += 1
        guard depth <= Self.maximumDepth else {
            fail(.corrupt("XML nesting deeper than \(Self.maximumDepth) levels"))
            return
        }
        let attributes = XMLAttributes(count: Int(attributeCount), pointers: attributes)
        do {
            if let recorder {
                try recorder._withUnsafeGuaranteedRef { recorder in
                    Result { () throws(KDBXError) in try recorder.startElement(localName, attributes: attributes) }
                }.get()
            } else {
                try handler.startElement(localName, attributes: attributes)
            }
        } catch {
            fail(error)
        }
    }

    private func didEnd() {
        guard !hasFailed else { return }
        depth -= 1
        do {
            if let recorder {
                try recorder._withUnsafeGuaranteedRef { recorder in Result { () throws(KDBXError) in try recorder.endElement() } }.get()
            } else {
                try handler.endElement()
            }
        } catch {
            fail(error)
        }
    }

    private func didRead(_ bytes: UnsafePointer<xmlChar>?, _ length: Int32) {
        guard !hasFailed, let bytes, length > 0 else { return }
        let text = UnsafeBufferPointer(start: bytes, count: Int(length))
        if let recorder {
            recorder._withUnsafeGuaranteedRef { $0.characters(text) }
        } else {
            handler.characters(text)
        }
    }
}

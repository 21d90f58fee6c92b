public import Foundation
internal import CLibXML2

/// Receives the events of `StrictXMLParser` in document order.
protocol XMLEventHandler: AnyObject {
    /// An element starts. Throwing stops the parse with that error.
    func startElement(name: String, attributes: [(name: String, value: String)]) throws(KDBXError)
    /// The innermost open element ends.
    func endElement() throws(KDBXError)
    /// Character data inside the innermost open element (may arrive in several pieces).
    func characters(_ bytes: UnsafeBufferPointer<UInt8>)
}

/// libxml2's SAX2 parser, made strict: any well-formedness error is fatal (no recovery), a DOCTYPE or
/// entity declaration is rejected, no network access, and nesting is capped.
final class StrictXMLParser {
    /// Deepest element nesting accepted (KeePass documents nest groups; 1000 levels is far beyond use).
    static let maximumDepth = 1000

    private unowned let handler: any XMLEventHandler
    private var failure: KDBXError?
    private var depth = 0
    private var context: xmlParserCtxtPtr?

    private init(handler: any XMLEventHandler) {
        self.handler = handler
    }

    /// Parses `document` completely, delivering events to `handler`; throws on the first error.
    static func parse(_ document: Data, handler: any XMLEventHandler) throws(KDBXError) {
        let parser = StrictXMLParser(handler: handler)
        try parser.run(document)
    }

    private func run(_ document: Data) throws(KDBXError) {
        var sax = xmlSAXHandler()
        sax.initialized = UInt32(XML_SAX2_MAGIC)
        sax.startElementNs = { context, localName, _, _, _, _, attributeCount, _, attributes in
            StrictXMLParser.from(context).didStart(localName, attributeCount, attributes)
        }
        sax.endElementNs = { context, _, _, _ in
            StrictXMLParser.from(context).didEnd()
        }
        sax.characters = { context, bytes, length in
            StrictXMLParser.from(context).didRead(bytes, length)
        }
        sax.cdataBlock = { context, bytes, length in
            StrictXMLParser.from(context).didRead(bytes, length)
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
            let text = (message ?? "parse error").trimmingCharacters(in: .whitespacesAndNewlines)
            Unmanaged<StrictXMLParser>.fromOpaque(context).takeUnretainedValue()
                .fail(.corrupt("XML line \(line): \(text)"))
        }

        let selfPointer = Unmanaged.passUnretained(self).toOpaque()
        guard let context = xmlCreatePushParserCtxt(&sax, selfPointer, nil, 0, nil) else {
            throw .corrupt("XML: parser could not be created")
        }
        self.context = context
        defer {
            xmlFreeParserCtxt(context)
            self.context = nil
        }
        let options = Int32(XML_PARSE_NONET.rawValue | XML_PARSE_HUGE.rawValue | XML_PARSE_NOCDATA.rawValue)
        xmlCtxtUseOptions(context, options)

        // Feed the document in 4 MiB pieces (the parser's int length), then terminate.
        let chunkSize = 4 << 20
        var status: Int32 = 0
        document.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) in
            let base = buffer.bindMemory(to: CChar.self).baseAddress
            var offset = 0
            repeat {
                let length = min(chunkSize, buffer.count - offset)
                let isLast = offset + length >= buffer.count
                status = xmlParseChunk(context, base.map { $0 + offset }, Int32(length), isLast ? 1 : 0)
                offset += length
                if status != 0 || failure != nil { return }
            } while offset < buffer.count
        }
        if let failure { throw failure }
        guard status == 0, context.pointee.wellFormed != 0 else { throw .corrupt("XML document is not well-formed") }
        guard depth == 0 else { throw .corrupt("XML document ends inside an element") }
    }

    private static func from(_ context: UnsafeMutableRawPointer?) -> StrictXMLParser {
        Unmanaged<StrictXMLParser>.fromOpaque(context!).takeUnretainedValue()
    }

    private func fail(_ error: KDBXError) {
        if failure == nil { failure = error }
        if let context { xmlStopParser(context) }
    }

    private func didStart(
        _ localName: UnsafePointer<xmlChar>?, _ attributeCount: Int32,
        _ attributes: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?
    ) {
        guard failure == nil, let localName else { return }
        depth += 1
        guard depth <= Self.maximumDepth else {
            fail(.corrupt("XML nesting deeper than \(Self.maximumDepth) levels"))
            return
        }
        var parsedAttributes: [(name: String, value: String)] = []
        if let attributes, attributeCount > 0 {
            parsedAttributes.reserveCapacity(Int(attributeCount))
            for index in 0..<Int(attributeCount) {
                // Five pointers per attribute: local name, prefix, URI, value start, value end.
                guard let name = attributes[index * 5], let start = attributes[index * 5 + 3],
                      let end = attributes[index * 5 + 4] else { continue }
                let value = String(decoding: UnsafeBufferPointer(start: start, count: end - start), as: UTF8.self)
                parsedAttributes.append((String(cString: name), value))
            }
        }
        do {
            try handler.startElement(name: String(cString: localName), attributes: parsedAttributes)
        } catch {
            fail(error)
        }
    }

    private func didEnd() {
        guard failure == nil else { return }
        depth -= 1
        do { try handler.endElement() } catch { fail(error) }
    }

    private func didRead(_ bytes: UnsafePointer<xmlChar>?, _ length: Int32) {
        guard failure == nil, let bytes, length > 0 else { return }
        handler.characters(UnsafeBufferPointer(start: bytes, count: Int(length)))
    }
}

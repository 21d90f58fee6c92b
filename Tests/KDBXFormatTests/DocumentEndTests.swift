import Foundation
@testable import KDBXFormat
import MyPassCore
import Testing

/// Where a document ends, read as libxml2 pulls it from the decompressing thread: libxml2 takes a NUL
/// byte after the document element for the end of its input, so what follows it must be refused
/// (and the thread that produces it stopped, never waited for); whitespace after the document is
/// allowed; a byte-order mark split across the first pieces is still recognised.
@Suite("the end of a pulled document: content after a NUL refused without waiting, a split byte-order mark read", .timeLimit(.minutes(1)))
struct DocumentEndTests {
    static func document() throws -> Data {
        var vault = Vault.empty(name: "end", at: Timestamp(unixSeconds: 1_700_000_000))
        vault = try vault.addingEntry(title: "Mail", password: "secret", to: vault.root.uuid, at: Timestamp(unixSeconds: 1_700_000_000)).vault
        return try KDBXWriter.plainXML(vault)
    }

    @Test("a NUL byte after the document, then 1 KB or 3 MB more, is refused (the larger tail once hung the read)",
          arguments: [1_024, 3 << 20])
    func contentAfterNul(tail: Int) throws {
        var bytes = try Self.document()
        bytes.append(0)
        bytes.append(Data(repeating: 0, count: tail))
        #expect(throws: KDBXError.self) { try KDBXReader.vault(fromPlainXML: bytes) }
    }

    @Test("3 MB of whitespace after the document read as the document alone")
    func whitespaceAfter() throws {
        let document = try Self.document()
        var bytes = document
        bytes.append(Data(String(repeating: "\n\t ", count: 1 << 20).utf8))
        #expect(try KDBXReader.vault(fromPlainXML: bytes) == KDBXReader.vault(fromPlainXML: document))
    }

    @Test("a byte-order mark whose first piece holds 1, 2 or 3 bytes is recognised", arguments: [1, 2, 3])
    func splitByteOrderMark(first: Int) throws {
        let bytes = [0xEF, 0xBB, 0xBF] + Array("<a><b>t</b></a>".utf8)
        var pieces = [Array(bytes[..<first]), Array(bytes[first...])]
        let counter = ElementCounter()
        let parser = try StrictXMLParser(handler: counter) { pieces.isEmpty ? nil : pieces.removeFirst() }
        try parser.parseAll()
        #expect(counter.started == 2)
        #expect(parser.reachedEndOfInput)
    }
}

/// Counts the elements a parser reports.
private final class ElementCounter: XMLEventHandler {
    var started = 0
    func startElement(_ name: UnsafePointer<UInt8>, attributes: XMLAttributes) throws(KDBXError) { started += 1 }
    func endElement() throws(KDBXError) {}
    func characters(_ bytes: UnsafeBufferPointer<UInt8>) {}
}

import Foundation
import KDBXFormat
import MyPassCore
import Testing
import TestSupport

/// KeePassXC indents its documents. The reader drops the whitespace before a child element and
/// after an end tag, and keeps the whitespace of a value: a value that is only whitespace, that
/// starts or ends with it, or that libxml2 hands over in several pieces (around a character
/// reference). Generated values, read from our compact document and from the same document indented
/// the way KeePassXC indents it, must give the same vault, with every value as it was written.
@Suite("an indented document reads as the compact one, every value's whitespace kept")
struct IndentedDocumentTests {
    static let pieces = [" ", "  ", "\t", "\n", "\r\n", "x", "a b", "&", "<", "é", "\u{1F511}", "  y  ", "]]>"]

    @Test("generated values, compact and indented", arguments: 0..<40)
    func sameVault(seed: Int) throws {
        var generator = SeededRandom(seed: UInt64(0x1D_E47 + seed))
        let time = Timestamp(iso8601: "2026-05-01T12:00:00Z")!
        var vault = Vault.empty(name: "indented", at: time)
        var expected: [String] = []
        for index in 0..<6 {
            let value = (0..<Int.random(in: 0...5, using: &generator))
                .map { _ in Self.pieces[Int.random(in: 0..<Self.pieces.count, using: &generator)] }.joined()
            expected.append(value)
            var entry = Entry(uuid: UUID(), times: Times(allAt: time))
            entry.fields = [EntryField(key: "Title", value: .plain("entry \(index)")),
                            EntryField(key: "Notes", value: .plain(value)),
                            EntryField(key: "Password", value: FieldValue(value, isProtected: true))]
            vault.root.entries.append(entry)
        }
        let exported = try KDBXWriter.plainXML(vault)
        let compact = Self.layout(exported, indented: false)
        let indented = Self.layout(exported, indented: true)
        #expect(indented.count > compact.count)
        let fromCompact = try KDBXReader.vault(fromPlainXML: compact)
        let fromIndented = try KDBXReader.vault(fromPlainXML: indented)
        #expect(fromIndented == fromCompact)
        for (entry, value) in zip(fromIndented.root.entries, expected) {
            #expect(entry.notes == value)
            #expect(entry.fields.first { $0.key == "Password" }?.value.text == value)
        }
    }

    /// `document` with the whitespace before every start tag, and before every end tag that follows
    /// an end tag, removed (never a value's: that sits between a start tag and its end tag), and with
    /// `indented`, a line break and one tab per level put there instead, as KeePassXC writes.
    static func layout(_ document: Data, indented: Bool) -> Data {
        let bytes = [UInt8](document)
        let blank: Set<UInt8> = [0x20, 0x09, 0x0A, 0x0D]
        var out: [UInt8] = []
        var depth = 0
        var index = 0
        var lastWasEndTag = false
        var afterTag = false
        while index < bytes.count {
            // A run of whitespace right after a tag and right before the next one.
            var end = index
            while end < bytes.count && blank.contains(bytes[end]) { end += 1 }
            if afterTag && end > index && end < bytes.count && bytes[end] == UInt8(ascii: "<") {
                let isEnd = end + 1 < bytes.count && bytes[end + 1] == UInt8(ascii: "/")
                if !isEnd || lastWasEndTag {
                    index = end  // indentation: dropped here, put back below when asked
                }
            }
            guard index < bytes.count else { break }
            if bytes[index] == UInt8(ascii: "<") && index + 1 < bytes.count {
                let next = bytes[index + 1]
                let isEnd = next == UInt8(ascii: "/")
                let isStart = !isEnd && next != UInt8(ascii: "?") && next != UInt8(ascii: "!")
                let tagEnd = bytes[index...].firstIndex(of: UInt8(ascii: ">")) ?? bytes.count - 1
                let selfClosing = bytes[tagEnd - 1] == UInt8(ascii: "/")
                if isEnd { depth -= 1 }
                if indented && out.last == UInt8(ascii: ">") && (isStart || (isEnd && lastWasEndTag)) {
                    out.append(UInt8(ascii: "\n"))
                    out.append(contentsOf: [UInt8](repeating: UInt8(ascii: "\t"), count: max(depth, 0)))
                }
                out.append(contentsOf: bytes[index...tagEnd])
                if isStart && !selfClosing { depth += 1 }
                lastWasEndTag = isEnd || selfClosing
                afterTag = true
                index = tagEnd + 1
            } else {
                out.append(bytes[index])
                lastWasEndTag = false
                afterTag = false
                index += 1
            }
        }
        return Data(out)
    }
}

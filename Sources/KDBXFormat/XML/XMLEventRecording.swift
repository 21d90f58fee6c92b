internal import Foundation

/// Records the SAX events of `StrictXMLParser` as compact byte chunks, so that parsing (on one thread)
/// and building the vault from the events (on another) overlap. Names are interned here (libxml2's
/// name pointers are only meaningful on the parsing side) and sent as identifiers; a name seen for
/// the first time is announced before its use. Chunks go to `deliver` at event boundaries once they
/// reach `chunkSize`; `deliver` returning false (the consumer stopped) stops the parse.
///
/// Layout, lengths and identifiers little-endian `UInt32`: start `1, name, attributeCount,
/// (name, valueLength, value)...`; characters `2, length, bytes`; end `3`; new name `4, length, UTF-8`.
/// Confined to one thread at a time, so its hot state is `@exclusivity(unchecked)`: the runtime's
/// access checks otherwise cost about a fifth of an open and up to half of a save (`mypass-bench open`).
final class XMLEventRecorder: XMLEventHandler {
    static let chunkSize = 256 * 1024
    /// The chunk being filled (a plain buffer: these appends are the parsing thread's hottest code).
    @exclusivity(unchecked) private var buffer: UnsafeMutableRawPointer
    @exclusivity(unchecked) private var capacity = XMLEventRecorder.chunkSize + 4096
    @exclusivity(unchecked) private var used = 0
    private let names = ElementNameTable()
    /// How many names the consumer knows (the known names, then those announced).
    @exclusivity(unchecked) private var announced = ElementName.knownNames.count
    /// Whether the last tag was an end tag: the open element then has a child already.
    @exclusivity(unchecked) private var afterEndTag = false
    /// Where the characters event of the whitespace met since the last tag starts in the chunk, before
    /// any other text: indentation when a child element follows (the event is taken back), a value
    /// when the element ends (kept). KeePassXC indents its documents, so this is most of the text
    /// events of the files it writes. Nil: no such whitespace.
    @exclusivity(unchecked) private var pendingBlankStart: Int?
    /// Whether text other than whitespace was recorded since the last tag (what follows is recorded as it comes).
    @exclusivity(unchecked) private var recordedText = false
    private let deliver: ([UInt8]) -> Bool
    /// The consumer refused a chunk handed over from `characters` (the parse stops at the next tag).
    @exclusivity(unchecked) private var consumerStopped = false

    init(deliver: @escaping ([UInt8]) -> Bool) {
        self.deliver = deliver
        buffer = .allocate(byteCount: capacity, alignment: 16)
    }

    deinit {
        buffer.deallocate()
    }

    func startElement(_ namePointer: UnsafePointer<UInt8>, attributes: XMLAttributes) throws(KDBXError) {
        afterEndTag = false
        recordedText = false
        // Whitespace before a child element is indentation: its event is taken back.
        if let start = pendingBlankStart {
            used = start
            pendingBlankStart = nil
        }
        let name = intern(namePointer)
        // Attribute names are interned (and any new one announced) before the event is written;
        // the second look-up of each hits the table's cache.
        var attributeCount = 0
        try attributes.forEach { attributeName, _ throws(KDBXError) in
            _ = intern(attributeName)
            attributeCount += 1
        }
        reserve(9)
        buffer.storeBytes(of: RecordedEvent.start.rawValue, toByteOffset: used, as: UInt8.self)
        buffer.storeBytes(of: UInt32(truncatingIfNeeded: name.id).littleEndian, toByteOffset: used + 1, as: UInt32.self)
        buffer.storeBytes(of: UInt32(truncatingIfNeeded: attributeCount).littleEndian, toByteOffset: used + 5, as: UInt32.self)
        used += 9
        try attributes.forEach { attributeName, value throws(KDBXError) in
            appendNumber(Int(names.intern(attributeName).id))
            appendBlock(UnsafeRawBufferPointer(value))
        }
        try flushIfFull()
    }

    func endElement() throws(KDBXError) {
        pendingBlankStart = nil  // whitespace before an end tag is the element's value: kept
        afterEndTag = true
        recordedText = false
        appendByte(RecordedEvent.end.rawValue)
        try flushIfFull()
    }

    func characters(_ bytes: UnsafeBufferPointer<UInt8>) {
        // Text after a child element is never read (an element's text is what precedes its first
        // child; between children it is indentation): about half of all text events are dropped here.
        guard !afterEndTag else { return }
        if !recordedText && bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x09 || $0 == 0x0D }) {
            // Recorded provisionally (the bytes do not outlive this callback): a child element
            // that follows takes the event back.
            if pendingBlankStart == nil { pendingBlankStart = used }
        } else {
            // Text: what was held as possible indentation is part of it.
            pendingBlankStart = nil
            recordedText = true
        }
        appendEvent(.characters, UnsafeRawBufferPointer(bytes))
        // A long text is handed over as it comes (a chunk that grew to four times its size stayed
        // that large for the rest of the parse), unless whitespace may still be taken back. This
        // callback cannot stop the parse: a consumer that has gone stops it at the next tag.
        if used >= Self.chunkSize && pendingBlankStart == nil && !flush() { consumerStopped = true }
    }

    /// Hands over what is left; false if the consumer has stopped.
    func flush() -> Bool {
        guard used > 0 else { return true }
        let chunk = [UInt8](UnsafeRawBufferPointer(start: buffer, count: used))
        used = 0
        return deliver(chunk)
    }

    @inline(__always)
    private func intern(_ pointer: UnsafePointer<UInt8>) -> ElementName {
        let name = names.intern(pointer)
        if Int(name.id) >= announced { announceNames(through: name) }
        return name
    }

    /// Announces the names the consumer does not know yet, up to `name`.
    private func announceNames(through name: ElementName) {
        while announced <= Int(name.id) {
            var text = names.string(ElementName(id: Int32(announced)))
            text.withUTF8 { appendEvent(.newName, UnsafeRawBufferPointer($0)) }
            announced += 1
        }
    }

    @inline(__always)
    private func flushIfFull() throws(KDBXError) {
        guard !consumerStopped else { throw .corrupt("the document reader stopped") }
        guard used >= Self.chunkSize else { return }
        guard flush() else { throw .corrupt("the document reader stopped") }
    }

    @inline(__always)
    private func reserve(_ count: Int) {
        guard used + count > capacity else { return }
        let grown = UnsafeMutableRawPointer.allocate(byteCount: max(capacity * 2, used + count), alignment: 16)
        grown.copyMemory(from: buffer, byteCount: used)
        buffer.deallocate()
        buffer = grown
        capacity = max(capacity * 2, used + count)
    }

    /// An event of one length-prefixed run of bytes (characters, a new name), reserved at once.
    @inline(__always)
    private func appendEvent(_ event: RecordedEvent, _ bytes: UnsafeRawBufferPointer) {
        reserve(5 + bytes.count)
        buffer.storeBytes(of: event.rawValue, toByteOffset: used, as: UInt8.self)
        buffer.storeBytes(of: UInt32(truncatingIfNeeded: bytes.count).littleEndian, toByteOffset: used + 1, as: UInt32.self)
        if bytes.count > 0, let base = bytes.baseAddress { (buffer + used + 5).copyMemory(from: base, byteCount: bytes.count) }
        used += 5 + bytes.count
    }

    @inline(__always)
    private func appendByte(_ byte: UInt8) {
        reserve(1)
        buffer.storeBytes(of: byte, toByteOffset: used, as: UInt8.self)
        used += 1
    }

    /// Lengths and identifiers: little-endian `UInt32`.
    @inline(__always)
    private func appendNumber(_ value: Int) {
        reserve(4)
        buffer.storeBytes(of: UInt32(truncatingIfNeeded: value).littleEndian, toByteOffset: used, as: UInt32.self)
        used += 4
    }

    @inline(__always)
    private func appendBlock(_ bytes: UnsafeRawBufferPointer) {
        appendNumber(bytes.count)
        guard bytes.count > 0, let base = bytes.baseAddress else { return }
        reserve(bytes.count)
        (buffer + used).copyMemory(from: base, byteCount: bytes.count)
        used += bytes.count
    }
}

/// The kinds of recorded events.
enum RecordedEvent: UInt8 {
    case start = 1
    case characters = 2
    case end = 3
    case newName = 4

    /// Plays one recorded chunk into `reader`, in order.
    static func replay(_ chunk: [UInt8], into reader: VaultDocumentReader) throws(KDBXError) {
        let result: Result<Void, KDBXError> = chunk.withUnsafeBytes { bytes in
            Result { () throws(KDBXError) in
                var events = RecordedEventReader(bytes)
                while !events.isAtEnd {
                    switch RecordedEvent(rawValue: events.byte()) {
                    case .start:
                        try reader.startElement(ElementName(id: Int32(events.number())))
                        for _ in 0..<events.number() {
                            let attributeName = ElementName(id: Int32(events.number()))
                            reader.attribute(attributeName, value: events.block())
                        }
                    case .characters:
                        reader.characters(events.block())
                    case .end:
                        try reader.endElement()
                    case .newName:
                        reader.defineName(String(decoding: events.block(), as: UTF8.self))
                    case nil:
                        throw .corrupt("XML: recorded event stream damaged")
                    }
                }
            }
        }
        try result.get()
    }
}

/// Reads the recorder's layout (the bytes come from this process, written by `XMLEventRecorder`).
private struct RecordedEventReader {
    private let bytes: UnsafeRawBufferPointer
    private var offset = 0

    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    var isAtEnd: Bool { offset >= bytes.count }

    mutating func byte() -> UInt8 {
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func number() -> Int {
        defer { offset += 4 }
        return Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
    }

    /// A length-prefixed run of bytes.
    mutating func block() -> UnsafeBufferPointer<UInt8> {
        let length = number()
        defer { offset += length }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + length)]).bindMemory(to: UInt8.self)
    }
}

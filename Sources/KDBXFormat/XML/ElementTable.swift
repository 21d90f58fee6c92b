internal import Foundation
internal import MyPassCore
internal import MyPassCrypto

/// The elements of the part of the document being read, stored flat: one array of small records,
/// one shared text buffer, no object per element. Entries and groups are converted to model values
/// as soon as they end and their elements are dropped (`truncate`), so the table holds one entry at
/// a time, and its storage is reused for the next.
///
/// Text is recorded only before an element's first child (KeePass elements hold either text or
/// children; whitespace between children is indentation).
///
/// A class, confined to one thread like the reader that owns it: the reader's many lookups then
/// use its arrays in place instead of copying the table (four retains and releases) each time.
final class ElementTable {
    struct Element {
        var name: ElementName
        var parent: Int32
        var firstChild: Int32 = -1
        var lastChild: Int32 = -1
        var nextSibling: Int32 = -1
        var previousSibling: Int32 = -1
        var textStart: Int
        var textEnd: Int
        var attributeStart: Int32
        var attributeEnd: Int32
        /// How many secret bytes there were when the element started: dropping it and what follows
        /// wipes from here (a protected value nested in another ends, and is stored, first).
        var secretMark: Int
        /// Where the unmasked bytes of a `Protected="True"` value start in `secrets`, -1 otherwise.
        var secretStart = -1
        var secretEnd = -1
    }

    /// The elements (records without references: the buffer keeps no count of what they point at).
    @exclusivity(unchecked) private var elements = ScratchBuffer<Element>(capacity: 1024)
    /// The elements' text, one run after another: `bytes` hands out views of it.
    @exclusivity(unchecked) private var text = ScratchBuffer<UInt8>(capacity: 1 << 16)
    @exclusivity(unchecked) private(set) var attributes: [(name: ElementName, value: String)] = []
    /// The unmasked bytes of protected values, one run after another: their only plain copy, wiped
    /// when their elements are dropped (and before the buffer grows or goes).
    @exclusivity(unchecked) private var secrets = ScratchBuffer<UInt8>(capacity: 1 << 12, holdsSecrets: true)

    init() {
        // The records are dropped by moving the count back.
        assert(_isPOD(Element.self))
    }

    var count: Int { elements.count }

    /// How many plain secret bytes the table holds (all of them are wiped when their elements go).
    var plainSecretByteCount: Int { secrets.count }

    /// Appends a started element under `parent` (-1 for none); `linked` false keeps it out of the
    /// parent's child list (entries and groups, which are converted and dropped separately). Its
    /// attributes follow (`addAttribute`).
    func append(_ name: ElementName, parent: Int, linked: Bool) -> Int {
        let index = elements.count
        elements.append(Element(
            name: name, parent: Int32(parent), textStart: text.count, textEnd: text.count,
            attributeStart: Int32(attributes.count), attributeEnd: Int32(attributes.count), secretMark: secrets.count))
        if parent >= 0 && linked {
            let last = elements[parent].lastChild
            if last >= 0 {
                elements[Int(last)].nextSibling = Int32(index)
                elements[index].previousSibling = last
            } else {
                elements[parent].firstChild = Int32(index)
            }
            elements[parent].lastChild = Int32(index)
        }
        return index
    }

    /// Adds an attribute to the element appended last.
    func addAttribute(_ name: ElementName, value: String) {
        attributes.append((name: name, value: value))
        elements[elements.count - 1].attributeEnd = Int32(attributes.count)
    }

    /// Adds character data to element `index` if it has no children yet.
    func appendText(_ bytes: UnsafeBufferPointer<UInt8>, to index: Int) {
        guard elements[index].firstChild < 0, elements[index].textEnd == text.count,
              let source = bytes.baseAddress, bytes.count > 0 else { return }
        text.reserve(bytes.count)
        (text.base + text.count).initialize(from: source, count: bytes.count)
        text.didAppend(bytes.count)
        elements[index].textEnd = text.count
    }

    /// Gives element `index` its unmasked bytes: `fill` writes at most `maximumCount` of them into
    /// the room it is handed and returns how many it wrote (what it wrote is wiped if it throws).
    func setUnprotected(
        for index: Int, maximumCount: Int, _ fill: (UnsafeMutablePointer<UInt8>) throws(KDBXError) -> Int
    ) throws(KDBXError) {
        secrets.reserve(maximumCount)
        let start = secrets.count
        do {
            let written = try fill(secrets.base + start)
            secrets.didAppend(written)
            elements[index].secretStart = start
            elements[index].secretEnd = start + written
        } catch {
            MemoryMask.wipe(UnsafeMutableRawBufferPointer(start: secrets.base + start, count: maximumCount))
            throw error
        }
    }

    /// Drops element `index` and everything after it (its descendants), keeping the storage.
    func truncate(to index: Int) {
        guard index < count else { return }
        let element = elements[index]
        // Unlink it from its parent, whose last child it is (everything after it is its subtree).
        let parent = Int(element.parent)
        if parent >= 0 && parent < index && elements[parent].lastChild == Int32(index) {
            elements[parent].lastChild = element.previousSibling
            if element.previousSibling >= 0 {
                elements[Int(element.previousSibling)].nextSibling = -1
            } else {
                elements[parent].firstChild = -1
            }
        }
        text.removeAll(from: element.textStart)
        attributes.removeSubrange(Int(element.attributeStart)...)
        secrets.removeAll(from: element.secretMark)  // plain secrets: wiped, not just let go
        elements.removeAll(from: index)
    }

    // MARK: Reading

    func name(_ index: Int) -> ElementName { elements[index].name }

    /// The children of `index` in document order.
    func children(_ index: Int) -> [Int] {
        var result: [Int] = []
        var child = Int(elements[index].firstChild)
        while child >= 0 {
            result.append(child)
            child = Int(elements[child].nextSibling)
        }
        return result
    }

    /// Calls `body` with each child of `index` in document order (no allocation).
    func forEachChild(_ index: Int, _ body: (Int) throws(KDBXError) -> Void) throws(KDBXError) {
        var child = Int(elements[index].firstChild)
        while child >= 0 {
            try body(child)
            child = Int(elements[child].nextSibling)
        }
    }

    /// The first child of `index`, or -1.
    func firstChild(_ index: Int) -> Int { Int(elements[index].firstChild) }

    /// The next sibling of `index`, or -1.
    func nextSibling(_ index: Int) -> Int { Int(elements[index].nextSibling) }

    /// The first child of `index` called `name`.
    func child(_ index: Int, _ name: ElementName) -> Int? {
        var child = Int(elements[index].firstChild)
        while child >= 0 {
            if elements[child].name == name { return child }
            child = Int(elements[child].nextSibling)
        }
        return nil
    }

    /// The raw text of `index`, valid until the table next changes (read it, copy what is kept).
    func bytes(_ index: Int) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: text.base + elements[index].textStart, count: elements[index].textEnd - elements[index].textStart)
    }

    /// The text of `index` as a string.
    func string(_ index: Int) -> String {
        String(decoding: bytes(index), as: UTF8.self)
    }

    /// Whether `index` has no text.
    func isEmpty(_ index: Int) -> Bool { elements[index].textStart == elements[index].textEnd }

    /// The unmasked bytes of a protected value, valid until the table next changes.
    func unprotectedBytes(_ index: Int) -> UnsafeBufferPointer<UInt8>? {
        let element = elements[index]
        return element.secretStart >= 0
            ? UnsafeBufferPointer(start: secrets.base + element.secretStart, count: element.secretEnd - element.secretStart) : nil
    }

    /// The value of attribute `name` on `index`.
    func attribute(_ index: Int, _ name: ElementName) -> String? {
        let element = elements[index]
        guard element.attributeStart < element.attributeEnd else { return nil }
        return attributes[Int(element.attributeStart)..<Int(element.attributeEnd)].first { $0.name == name }?.value
    }

    /// Whether attribute `name` holds KeePass's true.
    func isTrue(_ index: Int, _ name: ElementName) -> Bool {
        guard var value = attribute(index, name), value.utf8.count == 4 else { return false }
        return value.withUTF8 { $0[0] | 0x20 == 0x74 && $0[1] | 0x20 == 0x72 && $0[2] | 0x20 == 0x75 && $0[3] | 0x20 == 0x65 }
    }

    /// Element `index` and everything below it, as preserved XML.
    func preserved(_ index: Int, names: ElementNameTable) -> PreservedXML {
        let element = elements[index]
        let childIndices = children(index)
        return PreservedXML(
            name: names.string(element.name),
            attributes: attributes[Int(element.attributeStart)..<Int(element.attributeEnd)].map {
                PreservedXML.Attribute(name: names.string($0.name), value: $0.value)
            },
            text: childIndices.isEmpty ? string(index) : "",
            children: childIndices.map { preserved($0, names: names) })
    }
}

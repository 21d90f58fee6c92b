internal import Foundation

/// The comparison `contentDigest` stands for, made directly: no hashing, no protected value revealed.
/// Telling two versions of one entry apart happens for every entry of every merge and ancestry check,
/// where hashing both sides each time dominated (20 ms for two 1,000-entry vaults).
extension Entry {
    /// Whether `other` has the same content as this entry in the sense of `contentDigest`: equal
    /// digests exactly when this is true (order of fields, attachments, custom data and tags, and empty
    /// standard fields aside; strings compared by their UTF-8 bytes, protected values by keyed digest).
    public func hasSameContent(as other: Entry) -> Bool {
        guard uuid == other.uuid, iconID == other.iconID, customIconUUID == other.customIconUUID,
              Self.sameBytes(foregroundColor, other.foregroundColor), Self.sameBytes(backgroundColor, other.backgroundColor),
              Self.sameBytes(overrideURL, other.overrideURL), qualityCheck == other.qualityCheck,
              times.expires == other.times.expires, times.expiryTime == other.times.expiryTime,
              autoType.isEnabled == other.autoType.isEnabled,
              autoType.dataTransferObfuscation == other.autoType.dataTransferObfuscation,
              Self.sameBytes(autoType.defaultSequence, other.autoType.defaultSequence),
              autoType.associations.count == other.autoType.associations.count,
              zip(autoType.associations, other.autoType.associations).allSatisfy({
                  Self.sameBytes($0.window, $1.window) && Self.sameBytes($0.keystrokeSequence, $1.keystrokeSequence)
              }),
              preserved.count == other.preserved.count
        else { return false }
        // Fields in the same order with the same values (the usual case) are the same meaningful
        // fields too; only a difference in order or in empty standard fields needs the longer way.
        let sameField = { (lhs: EntryField, rhs: EntryField) in Self.sameBytes(lhs.key, rhs.key) && Self.sameValue(lhs.value, rhs.value) }
        guard (fields.count == other.fields.count && zip(fields, other.fields).allSatisfy(sameField))
            || Self.sameUnordered(meaningfulFields, other.meaningfulFields, key: \.key, equal: sameField)
        else { return false }
        guard Self.sameUnordered(tags, other.tags, key: { $0 }, equal: Self.sameBytes) else { return false }
        guard Self.sameUnordered(attachments, other.attachments, key: \.name, equal: {
            Self.sameBytes($0.name, $1.name) && $0.binary == $1.binary
        }) else { return false }
        guard Self.sameUnordered(customData.content, other.customData.content, key: \.key, equal: {
            Self.sameBytes($0.key, $1.key) && Self.sameBytes($0.value, $1.value)
        }) else { return false }
        return preserved.isEmpty || preserved.map { String(describing: $0) } == other.preserved.map { String(describing: $0) }
    }

    /// The fields the digest covers: all but empty standard fields.
    private var meaningfulFields: [EntryField] {
        fields.allSatisfy({ !$0.value.isEmptyText || !EntryField.isStandard($0.key) })
            ? fields
            : fields.filter { !(EntryField.isStandard($0.key) && $0.value.isEmptyText) }
    }

    private static func sameValue(_ lhs: FieldValue, _ rhs: FieldValue) -> Bool {
        switch (lhs, rhs) {
        case let (.plain(left), .plain(right)): sameBytes(left, right)
        case let (.protected(left), .protected(right)): left == right
        default: false
        }
    }

    /// Byte equality (`==` on `String` also equates canonically equivalent spellings; the digest does not).
    /// Compared as one block of bytes where both strings hold contiguous UTF-8 (native strings do),
    /// byte by byte otherwise.
    private static func sameBytes(_ lhs: String, _ rhs: String) -> Bool {
        let count = lhs.utf8.count
        guard count == rhs.utf8.count else { return false }
        let contiguous = lhs.utf8.withContiguousStorageIfAvailable { left in
            rhs.utf8.withContiguousStorageIfAvailable { right in
                count == 0 || memcmp(left.baseAddress!, right.baseAddress!, count) == 0
            }
        }
        if case .some(.some(let same)) = contiguous { return same }
        return lhs.utf8.elementsEqual(rhs.utf8)
    }

    /// Equal as collections ordered by `key`: in the same order (the usual case) without sorting.
    private static func sameUnordered<Element>(
        _ lhs: [Element], _ rhs: [Element], key: (Element) -> String, equal: (Element, Element) -> Bool
    ) -> Bool {
        guard lhs.count == rhs.count else { return false }
        if zip(lhs, rhs).allSatisfy(equal) { return true }
        let sortedLeft = lhs.sorted { key($0) < key($1) }, sortedRight = rhs.sorted { key($0) < key($1) }
        return zip(sortedLeft, sortedRight).allSatisfy(equal)
    }
}

extension FieldValue {
    /// Whether the text is empty (without revealing a protected value).
    var isEmptyText: Bool { utf8Count == 0 }
}

extension Entry {
    /// A hash of this entry's content that agrees with `hasSameContent`: entries with the same content
    /// hash alike (fields, tags and attachments combined in any order; empty standard fields left
    /// out). Lets a set of versions of one entry that share a modification time (a planted history of
    /// thousands of items of one second) be told apart by hash instead of comparing each with each.
    public var contentHashValue: Int {
        var hasher = Hasher()
        hasher.combine(uuid)
        hasher.combine(iconID)
        hasher.combine(times.expires)
        hasher.combine(times.expiryTime)
        hasher.combine(Self.unorderedHash(meaningfulFields) { hasher, field in
            hasher.combine(field.key)
            hasher.combine(field.value)
        })
        hasher.combine(Self.unorderedHash(tags) { hasher, tag in hasher.combine(tag) })
        hasher.combine(Self.unorderedHash(attachments) { hasher, attachment in
            hasher.combine(attachment.name)
            hasher.combine(attachment.binary)
        })
        return hasher.finalize()
    }

    /// A hash of `elements` that does not depend on their order (the sum of each one's hash).
    private static func unorderedHash<Element>(_ elements: [Element], _ combine: (inout Hasher, Element) -> Void) -> Int {
        var sum = 0
        for element in elements {
            var hasher = Hasher()
            combine(&hasher, element)
            sum &+= hasher.finalize()
        }
        return sum
    }
}

public import Foundation
internal import MyPassCrypto

/// A stable SHA-256 of an entry's content (everything but its times, usage counters and history), used to
/// recognise the same version on two devices and to break ties deterministically. It does not depend on
/// how a program orders or spells the same content: fields, attachments and custom data by key, tags as
/// a set, an empty standard field the same as none (KeePassXC writes fields sorted and every standard
/// field; other programs in insertion order and only the fields set). The digest is never shown: it
/// covers protected values.
extension Entry {
    /// A digest of the content (for equality of large values).
    public var contentDigest: Data {
        var writer = DigestWriter()
        writer.add(uuid.uuidString)
        let meaningful = fields.filter { !(EntryField.isStandard($0.key) && $0.value.text.isEmpty) }
        for field in meaningful.sorted(by: { $0.key < $1.key }) {
            writer.add(field.key)
            writer.add(field.value.isProtected ? "1" : "0")
            writer.add(field.value.text)
        }
        writer.add("tags")
        tags.sorted().forEach { writer.add($0) }
        writer.add("attachments")
        for attachment in attachments.sorted(by: { $0.name < $1.name }) {
            writer.add(attachment.name)
            writer.add(attachment.binary.sha256)
        }
        writer.add("\(iconID)|\(customIconUUID?.uuidString ?? "")|\(foregroundColor)|\(backgroundColor)|\(overrideURL)")
        writer.add("\(qualityCheck.map { $0 ? "1" : "0" } ?? "-")|\(times.expires)|\(times.expiryTime.secondsSinceYearOne)")
        writer.add("\(autoType.isEnabled)|\(autoType.dataTransferObfuscation)|\(autoType.defaultSequence)")
        for association in autoType.associations {
            writer.add(association.window)
            writer.add(association.keystrokeSequence)
        }
        writer.add("customData")
        for item in customData.content.sorted(by: { $0.key < $1.key }) {
            writer.add(item.key)
            writer.add(item.value)
        }
        writer.add("preserved:\(preserved.count)")
        preserved.forEach { writer.add(String(describing: $0)) }
        return writer.finish()
    }
}

/// Length-prefixed strings into SHA-256, so that ("ab","c") and ("a","bc") differ.
private struct DigestWriter: ~Copyable {
    private var hasher = SHA2Hasher(.sha256)

    mutating func add(_ text: String) {
        var bytes = Array(text.utf8)
        var length = UInt64(bytes.count).littleEndian
        withUnsafeBytes(of: &length) { hasher.update(Data($0)) }
        hasher.update(bytes)
        MemoryMask.wipe(&bytes)
    }

    consuming func finish() -> Data {
        hasher.finalize()
    }
}

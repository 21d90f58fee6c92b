public import Foundation

/// An edit of one entry's whole structure, described as values and applied in one step (one
/// history item): standard and custom fields with their protect flags, tags, expiry, icon and TOTP.
/// What `add` and `edit` do; an app builds the same value.
public struct EntryChange: Sendable, Equatable {
    /// Fields to set (standard or custom), in order. A new field is protected when Meta's memory
    /// protection says so for a standard field; an existing one keeps its flag; `protect` and
    /// `unprotect` decide over both.
    public var setFields: [(name: String, value: String)] = []
    /// Fields to mark protected.
    public var protect: [String] = []
    /// Fields to mark not protected.
    public var unprotect: [String] = []
    /// Custom fields to remove (standard fields cannot be removed; set them empty).
    public var removeFields: [String] = []
    /// All tags, replacing the entry's; nil keeps them.
    public var tags: [String]?
    /// Tags to add.
    public var addTags: [String] = []
    /// Tags to remove.
    public var removeTags: [String] = []
    /// The new expiry; nil keeps it.
    public var expiry: Expiry?
    /// A standard KeePass icon (0-68); nil keeps it.
    public var icon: Int?
    /// A TOTP as an `otpauth://totp/` URI, stored as KeePassXC stores it (the protected field `otp`).
    public var totp: String?

    /// When an entry expires.
    public enum Expiry: Sendable, Equatable {
        case never
        case at(Timestamp)
    }

    /// No change.
    public init() {}

    /// The name of the field KeePassXC keeps a TOTP URI in.
    public static let totpField = "otp"
    /// The highest standard KeePass icon number.
    public static let maximumIcon = 68

    /// Whether this change changes nothing.
    public var isEmpty: Bool { self == EntryChange() }

    /// Tags as KeePass writes them: trimmed, non-empty, without the separators `,` and `;`.
    public static func tags(from text: String) throws(VaultEditError) -> [String] {
        let tags = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        for tag in tags where tag.contains(";") { throw .invalidName("a tag cannot contain ';': \(tag)") }
        return tags
    }

    /// The first character of `text` that XML 1.0 cannot hold (NUL, the C0 controls but tab, line
    /// feed and carriage return, ESC among them; U+FFFE, U+FFFF), as `U+001B`; nil when it has none.
    public static func unstorableCharacter(in text: String) -> String? {
        text.unicodeScalars.first { scalar in
            (scalar.value < 0x20 && ![0x09, 0x0A, 0x0D].contains(scalar.value)) || scalar.value == 0xFFFE || scalar.value == 0xFFFF
        }.map { "U+" + String(format: "%04X", $0.value) }
    }

    /// Refuses a value of `field` that holds a character a KeePass file cannot store (the value is
    /// never in the message).
    public static func checkStorable(_ value: String, field: String) throws(VaultEditError) {
        guard let character = unstorableCharacter(in: value) else { return }
        throw .invalidName("field \(field): its value holds \(character), a control character that a KeePass file (XML 1.0) "
                           + "cannot store; KeePassXC, pykeepass and KeePass would each read something else. Nothing was written")
    }

    /// Applies the change to `entry` (`protection`: the vault's memory protection, for new standard fields).
    public func apply(to entry: inout Entry, protection: Meta.MemoryProtection) throws(VaultEditError) {
        for (name, value) in setFields {
            guard !name.isEmpty, !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                throw .invalidName("a field name must be non-empty text without control characters")
            }
            try Self.checkStorable(value, field: name)
            let isProtected = entry.field(name)?.isProtected ?? (EntryField.isStandard(name) && protection.protects(name))
            entry.setField(name, FieldValue(value, isProtected: isProtected))
        }
        if let totp {
            try Self.checkStorable(totp, field: Self.totpField)
            do { _ = try TOTP.fromURI(totp) } catch { throw .invalidName("not a usable otpauth://totp/ URI: \(error)") }
            entry.setField(Self.totpField, FieldValue(totp, isProtected: true))
        }
        for name in removeFields {
            guard !EntryField.isStandard(name) else { throw .invalidName("\(name) is a standard field: set it empty instead of removing it") }
            guard entry.field(name) != nil else { throw .invalidName("the entry has no field \(name)") }
            entry.setField(name, nil)
        }
        for (names, flag) in [(protect, true), (unprotect, false)] {
            for name in names {
                guard let value = entry.field(name) else { throw .invalidName("the entry has no field \(name)") }
                entry.setField(name, FieldValue(value.text, isProtected: flag))
            }
        }
        if let tags { entry.tags = tags }
        for tag in addTags where !entry.tags.contains(tag) { entry.tags.append(tag) }
        entry.tags.removeAll { removeTags.contains($0) }
        switch expiry {
        case .never?: entry.times.expires = false
        case .at(let time)?:
            entry.times.expires = true
            entry.times.expiryTime = time
        case nil: break
        }
        if let icon {
            guard (0...Self.maximumIcon).contains(icon) else { throw .invalidName("icons are numbered 0 to \(Self.maximumIcon)") }
            entry.iconID = icon
            entry.customIconUUID = nil
        }
    }

    public static func == (a: EntryChange, b: EntryChange) -> Bool {
        a.setFields.map(\.name) == b.setFields.map(\.name) && a.setFields.map(\.value) == b.setFields.map(\.value)
            && a.protect == b.protect && a.unprotect == b.unprotect && a.removeFields == b.removeFields && a.tags == b.tags
            && a.addTags == b.addTags && a.removeTags == b.removeTags && a.expiry == b.expiry && a.icon == b.icon && a.totp == b.totp
    }
}

extension Entry {
    /// Whether the entry has expired at `now`.
    public func isExpired(at now: Date = Date()) -> Bool {
        times.expires && times.expiryTime.date <= now
    }
}

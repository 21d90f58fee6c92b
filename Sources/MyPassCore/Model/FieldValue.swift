/// The value of an entry string field: plain, or protected (masked in memory, written with
/// `Protected="True"`).
public enum FieldValue: Sendable, Hashable {
    case plain(String)
    case protected(ProtectedValue)

    /// A value with the given protection.
    public init(_ text: String, isProtected: Bool) {
        self = isProtected ? .protected(ProtectedValue(text)) : .plain(text)
    }

    /// Whether KeePass's protect flag is set.
    public var isProtected: Bool {
        if case .protected = self { return true }
        return false
    }

    /// The text (revealed for protected values).
    public var text: String {
        switch self {
        case .plain(let text): text
        case .protected(let value): value.reveal()
        }
    }

    /// UTF-8 length of the text.
    public var utf8Count: Int {
        switch self {
        case .plain(let text): text.utf8.count
        case .protected(let value): value.utf8Count
        }
    }
}

extension FieldValue: CustomStringConvertible {
    /// Plain text as is; protected values hidden.
    public var description: String {
        switch self {
        case .plain(let text): text
        case .protected(let value): value.description
        }
    }
}

/// One string field of an entry (`<String><Key/><Value/></String>`).
public struct EntryField: Sendable, Hashable {
    /// The field's name, behind one reference: a field is then 32 bytes wide instead of 40 (a value
    /// is 17), and a vault holds a field for every version of every entry.
    private var name: FieldName

    /// The field's name.
    public var key: String {
        get { name.text }
        set { name = FieldName.named(newValue) }
    }
    /// The field's value and protect flag.
    public var value: FieldValue

    /// A field.
    public init(key: String, value: FieldValue) {
        self.name = FieldName.named(key)
        self.value = value
    }

    /// A field with `other`'s name (its storage shared: a reader's next version of the same field).
    package init(nameOf other: EntryField, value: FieldValue) {
        self.name = other.name
        self.value = value
    }

    /// Whether `other` has this field's name in the same storage (the same name, then, without comparing).
    package func sharesName(with other: EntryField) -> Bool { name === other.name }

    public static func == (lhs: EntryField, rhs: EntryField) -> Bool {
        (lhs.name === rhs.name || lhs.name.text == rhs.name.text) && lhs.value == rhs.value
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(name.text)
        hasher.combine(value)
    }

    /// The title field's key.
    public static let title = "Title"
    /// The user name field's key.
    public static let userName = "UserName"
    /// The password field's key.
    public static let password = "Password"
    /// The URL field's key.
    public static let url = "URL"
    /// The notes field's key.
    public static let notes = "Notes"

    /// The five fields every KeePass entry has.
    public static let standardKeys = [title, userName, password, url, notes]

    /// Whether `key` is one of the standard fields.
    public static func isStandard(_ key: String) -> Bool { standardKeys.contains(key) }
}

/// The immutable name of a field, shared by every version that has it; the five standard names
/// are one instance each for the whole process.
private final class FieldName: Sendable {
    let text: String

    private init(_ text: String) {
        self.text = text
    }

    private static let standard = EntryField.standardKeys.map(FieldName.init)

    /// The shared instance for a standard name, else a new one.
    static func named(_ text: String) -> FieldName {
        standard.first { $0.text == text } ?? FieldName(text)
    }
}

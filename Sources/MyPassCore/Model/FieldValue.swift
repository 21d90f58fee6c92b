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
    /// The field's name.
    public var key: String
    /// The field's value and protect flag.
    public var value: FieldValue

    /// A field.
    public init(key: String, value: FieldValue) {
        self.key = key
        self.value = value
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

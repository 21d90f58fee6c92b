internal import Foundation
internal import MyPassCore
internal import MyPassCrypto

/// The options of `add` and `edit` for the rest of an entry's structure: custom fields and their
/// protect flags, tags, expiry, icon and TOTP. Values that are secrets come from standard input, one
/// line each, after the vault's password and the entry's password: every `--field-stdin` in order,
/// then `--totp-stdin`.
struct EntryFieldOptions: OptionGroup {
    let field = Option<FieldAssignment>("--field", valueName: "name=value", help: "Set a custom (or standard) string field; repeatable.",
                                        expected: "NAME=VALUE", convert: FieldAssignment.init(parsing:))
    let fieldFromStandardInput = Option<String>("--field-stdin", valueName: "name", help: "The field's value is the next line of standard input (for secrets: never in argv); repeatable.")
    let protect = Option<String>("--protect", valueName: "name", help: "Protect the field (hidden by show, masked in memory); repeatable.")
    let unprotect = Option<String>("--unprotect", valueName: "name", help: "Stop protecting the field; repeatable.")
    let removeField = Option<String>("--remove-field", valueName: "name", help: "Remove a custom field; repeatable.")
    let tags = Option<String>("--tags", valueName: "a,b", help: "Replace the tags.")
    let addTag = Option<String>("--add-tag", valueName: "tag", help: "Add a tag; repeatable.")
    let removeTag = Option<String>("--remove-tag", valueName: "tag", help: "Remove a tag; repeatable.")
    let expires = Option<EntryChange.Expiry>("--expires", valueName: "ISO8601|never", help: "When the entry expires (2027-01-31 or 2027-01-31T12:00:00Z), or never.",
                                             expected: "an ISO 8601 date or time, or never", convert: FieldAssignment.expiry(parsing:))
    let icon = Option<Int>.number("--icon", valueName: "n", help: "A standard KeePass icon (0-68).", in: 0...EntryChange.maximumIcon)
    let totp = Option<String>("--totp", valueName: "uri", help: "An otpauth://totp/ URI, stored as KeePassXC does (visible in the process list: prefer --totp-stdin).")
    let totpFromStandardInput = Flag("--totp-stdin", help: "The otpauth://totp/ URI is the next line of standard input.")

    /// Warnings for secrets given in argv, where every process of the machine can read them: an
    /// entry's password through `--field Password=…` (`--field-stdin Password` keeps it out).
    func argvWarnings(_ parsed: ParsedArguments) -> [String] {
        parsed.all(field).filter { $0.name == "Password" }.map { _ in
            "--field Password=… puts the password in the process list, readable by every user of this machine; "
                + "use --field-stdin Password (or -p) instead"
        }
    }

    /// The change the options ask for (reading standard input for the `-stdin` options).
    func change(_ parsed: ParsedArguments, command: String) throws -> EntryChange {
        var change = EntryChange()
        change.setFields = parsed.all(field).map { ($0.name, $0.value) }
        for name in parsed.all(fieldFromStandardInput) {
            guard let line = PasswordInput.readStandardInputLine() else {
                throw CommandLineError.usage(message: "--field-stdin \(name): no line for it on standard input", command: command)
            }
            change.setFields.append((name, String(decoding: line.unprotectedData(), as: UTF8.self)))
        }
        change.protect = parsed.all(protect)
        change.unprotect = parsed.all(unprotect)
        change.removeFields = parsed.all(removeField)
        change.tags = try parsed[tags].map { try EntryChange.tags(from: $0) }
        change.addTags = try parsed.all(addTag).flatMap { try EntryChange.tags(from: $0) }
        change.removeTags = parsed.all(removeTag)
        change.expiry = parsed[expires]
        change.icon = parsed[icon]
        change.totp = parsed[totp]
        if parsed[totpFromStandardInput] {
            guard let line = PasswordInput.readStandardInputLine() else {
                throw CommandLineError.usage(message: "--totp-stdin: no line for the URI on standard input", command: command)
            }
            change.totp = String(decoding: line.unprotectedData(), as: UTF8.self)
        }
        return change
    }
}

/// `NAME=VALUE` of `--field`.
struct FieldAssignment: Sendable {
    let name: String
    let value: String

    init?(parsing text: String) {
        guard let equals = text.firstIndex(of: "="), equals != text.startIndex else { return nil }
        name = String(text[..<equals])
        value = String(text[text.index(after: equals)...])
    }

    /// `never`, a date (`2027-01-31`, midnight UTC) or an ISO 8601 time.
    static func expiry(parsing text: String) -> EntryChange.Expiry? {
        if text == "never" { return .never }
        guard isCalendarDate(text.prefix(10)) else { return nil }  // 2027-02-30 is refused, not moved to March
        let time = text.count == 10 ? text + "T00:00:00Z" : text
        return Timestamp(iso8601: time).map { .at($0) }
    }

    /// Whether `date` is `YYYY-MM-DD` naming a day that exists (leap years counted).
    private static func isCalendarDate(_ date: Substring) -> Bool {
        let parts = date.split(separator: "-", omittingEmptySubsequences: false)
        guard date.count == 10, parts.count == 3, let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
              (1...12).contains(month) else { return false }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
        return (1...days).contains(day)
    }
}

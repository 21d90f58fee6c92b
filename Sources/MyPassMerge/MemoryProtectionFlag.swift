public import MyPassCore

/// One flag of `Meta.MemoryProtection`, merged as a setting of its own (MERGE.md rule 11): the flags
/// are independent choices, so one side's change of one flag never undoes the other side's change
/// of another.
public enum MemoryProtectionFlag: String, CaseIterable, Sendable {
    case title, userName, password, url, notes

    /// The flag's element in KeePass's XML (`<MemoryProtection>` child), the name the change log uses.
    public var elementName: String {
        switch self {
        case .title: "ProtectTitle"
        case .userName: "ProtectUserName"
        case .password: "ProtectPassword"
        case .url: "ProtectURL"
        case .notes: "ProtectNotes"
        }
    }

    /// Whether the flag is set in `protection`.
    public func isOn(in protection: Meta.MemoryProtection) -> Bool {
        switch self {
        case .title: protection.protectTitle
        case .userName: protection.protectUserName
        case .password: protection.protectPassword
        case .url: protection.protectURL
        case .notes: protection.protectNotes
        }
    }

    /// Sets the flag in `protection` to `isOn`.
    public func set(_ isOn: Bool, in protection: inout Meta.MemoryProtection) {
        switch self {
        case .title: protection.protectTitle = isOn
        case .userName: protection.protectUserName = isOn
        case .password: protection.protectPassword = isOn
        case .url: protection.protectURL = isOn
        case .notes: protection.protectNotes = isOn
        }
    }
}

extension EntryField {
    /// Whether the field `key` holding `value` is a secret that is never shown, whatever its own
    /// protection flag: the password (KeePass 2 writes it unprotected when its memory protection for
    /// passwords is off), any standard field the vault's memory protection covers, a protected value,
    /// a one-time-password secret (`TOTP.holdsSecret`), and the custom fields in which browser
    /// extensions keep form values (`KPRPC JSON` of Kee, `KPH: ` fields of KeePassXC-Browser).
    public static func isSecret(key: String, value: FieldValue, protection: Meta.MemoryProtection) -> Bool {
        value.isProtected || key == password || protection.protects(key)
            || TOTP.holdsSecret(key: key, value: value.text)
            || key == "KPRPC JSON" || key.hasPrefix("KPH: ")
    }
}

internal import Foundation
internal import MyPassCrypto

extension TOTP {
    /// Whether the field `key` holding `value` carries a one-time-password secret, whatever its
    /// protection flag: `otp`, `TOTP Seed`, KeePass's `TimeOtp-Secret*` and `HmacOtp-Secret*`, or any
    /// field whose value is an `otpauth://` URI. Such a value is shown as a protected one is.
    public static func holdsSecret(key: String, value: String) -> Bool {
        ["otp", "TOTP Seed"].contains(key) || key.hasPrefix("TimeOtp-Secret") || key.hasPrefix("HmacOtp-Secret")
            || value.range(of: "otpauth://", options: .caseInsensitive) != nil
    }

    /// The one-time-password configuration an entry stores, in any form clients write it: an `otp`
    /// field with an `otpauth://totp/…` URI (KeePassXC 2.6+, most apps), KeePassXC's older `TOTP Seed` +
    /// `TOTP Settings`, or KeePass 2.47+'s `TimeOtp-*` fields. Nil when the entry has none.
    public static func configuration(of entry: Entry) throws(TOTPError) -> TOTP? {
        if let uri = entry.field("otp")?.text, !uri.isEmpty {
            return try fromURI(uri)
        }
        if let seed = entry.field("TOTP Seed")?.text, !seed.isEmpty {
            return try fromKeePassXCLegacy(seed: seed, settings: entry.field("TOTP Settings")?.text ?? "")
        }
        if entry.fields.contains(where: { $0.key.hasPrefix("TimeOtp-Secret") }) {
            return try fromKeePassTimeOtp(entry)
        }
        return nil
    }

    /// `otpauth://totp/LABEL?secret=BASE32&issuer=…&algorithm=SHA1&digits=6&period=30[&encoder=steam]`.
    public static func fromURI(_ text: String) throws(TOTPError) -> TOTP {
        guard let components = URLComponents(string: text.trimmingCharacters(in: .whitespaces)),
              components.scheme?.lowercased() == "otpauth" else {
            throw .invalidParameter("not an otpauth:// URI")
        }
        guard components.host?.lowercased() == "totp" else {
            throw .unsupported("only time-based codes (otpauth://totp) are supported")
        }
        var query: [String: String] = [:]
        for item in components.queryItems ?? [] { query[item.name.lowercased()] = item.value ?? "" }
        guard let secretText = query["secret"], let secret = Base32.decode(secretText), !secret.isEmpty else {
            throw .invalidSecret("the URI's secret is missing or not Base32")
        }
        let algorithm = try parseAlgorithm(query["algorithm"] ?? "SHA1")
        let period = try parseNumber(query["period"] ?? "30", "period")
        let encoding: Encoding = query["encoder"]?.lowercased() == "steam"
            ? .steam : .digits(try parseNumber(query["digits"] ?? "6", "digits"))
        return try TOTP(secret: SecureBytes(secret), algorithm: algorithm, encoding: encoding, period: period)
    }

    /// KeePassXC before 2.6: `TOTP Seed` (Base32) and `TOTP Settings` = `PERIOD;DIGITS` where DIGITS
    /// may be `S` for Steam, optionally `;ALGORITHM`.
    static func fromKeePassXCLegacy(seed: String, settings: String) throws(TOTPError) -> TOTP {
        guard let secret = Base32.decode(seed), !secret.isEmpty else { throw .invalidSecret("TOTP Seed is not Base32") }
        let parts = settings.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        let period = parts.count > 0 ? try parseNumber(parts[0], "period") : 30
        let encoding: Encoding = parts.count > 1
            ? (parts[1].uppercased() == "S" ? .steam : .digits(try parseNumber(parts[1], "digits"))) : .digits(6)
        let algorithm = parts.count > 2 ? try parseAlgorithm(parts[2]) : .sha1
        return try TOTP(secret: SecureBytes(secret), algorithm: algorithm, encoding: encoding, period: period)
    }

    /// KeePass 2.47+: `TimeOtp-Secret` (UTF-8), `-Hex`, `-Base32` or `-Base64`; `TimeOtp-Length`,
    /// `TimeOtp-Period`, `TimeOtp-Algorithm` (`HMAC-SHA-1`, `HMAC-SHA-256`, `HMAC-SHA-512`).
    static func fromKeePassTimeOtp(_ entry: Entry) throws(TOTPError) -> TOTP {
        let secret: Data
        if let text = entry.field("TimeOtp-Secret")?.text {
            secret = Data(text.utf8)
        } else if let text = entry.field("TimeOtp-Secret-Hex")?.text {
            guard let bytes = hexBytes(text) else { throw .invalidSecret("TimeOtp-Secret-Hex is not hexadecimal") }
            secret = bytes
        } else if let text = entry.field("TimeOtp-Secret-Base32")?.text {
            guard let bytes = Base32.decode(text) else { throw .invalidSecret("TimeOtp-Secret-Base32 is not Base32") }
            secret = bytes
        } else if let text = entry.field("TimeOtp-Secret-Base64")?.text {
            guard let bytes = Data(base64Encoded: text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
                throw .invalidSecret("TimeOtp-Secret-Base64 is not Base64")
            }
            secret = bytes
        } else {
            throw .invalidSecret("no TimeOtp-Secret field")
        }
        let length = try entry.field("TimeOtp-Length").map { value throws(TOTPError) in try parseNumber(value.text, "length") } ?? 6
        let period = try entry.field("TimeOtp-Period").map { value throws(TOTPError) in try parseNumber(value.text, "period") } ?? 30
        let algorithm = try entry.field("TimeOtp-Algorithm").map { value throws(TOTPError) in
            try parseAlgorithm(value.text.replacingOccurrences(of: "HMAC-", with: "").replacingOccurrences(of: "-", with: ""))
        } ?? .sha1
        return try TOTP(secret: SecureBytes(secret), algorithm: algorithm, encoding: .digits(length), period: period)
    }

    private static func parseAlgorithm(_ text: String) throws(TOTPError) -> OTPHashAlgorithm {
        let name = text.uppercased().replacingOccurrences(of: "-", with: "")
        guard let algorithm = OTPHashAlgorithm(rawValue: name) else { throw .unsupported("algorithm \(text)") }
        return algorithm
    }

    private static func parseNumber(_ text: String, _ name: String) throws(TOTPError) -> Int {
        guard let number = Int(text.trimmingCharacters(in: .whitespaces)), number > 0 else {
            throw .invalidParameter("\(name) \"\(text)\" is not a positive number")
        }
        return number
    }

    private static func hexBytes(_ text: String) -> Data? {
        let digits = Array(text.filter { !$0.isWhitespace })
        guard digits.count % 2 == 0 else { return nil }
        var bytes = Data()
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(digits[index...index + 1]), radix: 16) else { return nil }
            bytes.append(byte)
        }
        return bytes
    }
}

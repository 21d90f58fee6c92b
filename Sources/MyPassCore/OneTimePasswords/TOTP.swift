public import Foundation
public import MyPassCrypto

/// A time-based one-time password generator (RFC 6238 over RFC 4226's HOTP): SHA-1, SHA-256 or
/// SHA-512, 6-8 digits or Steam Guard's five characters, any period.
public struct TOTP: Sendable {
    /// How the truncated HMAC becomes the code.
    public enum Encoding: Sendable, Equatable {
        /// `count` decimal digits (6 to 8 in practice; RFC 4226 allows 6 and more).
        case digits(Int)
        /// Steam Guard: five characters from a 26-letter alphabet without look-alikes.
        case steam
    }

    /// The shared secret.
    public let secret: SecureBytes
    /// The HMAC hash.
    public let algorithm: OTPHashAlgorithm
    /// How a code is written (digits, or Steam's alphabet).
    public let encoding: Encoding
    /// Seconds per code.
    public let period: Int

    /// A configuration with these values.
    public init(secret: SecureBytes, algorithm: OTPHashAlgorithm = .sha1, encoding: Encoding = .digits(6), period: Int = 30)
        throws(TOTPError) {
        guard !secret.isEmpty else { throw .invalidSecret("the secret is empty") }
        guard period > 0 else { throw .invalidParameter("the period must be at least one second") }
        if case .digits(let count) = encoding, !(1...10).contains(count) {
            throw .invalidParameter("\(count) digits (1 to 10 are possible, 6 to 8 usual)")
        }
        self.secret = secret
        self.algorithm = algorithm
        self.encoding = encoding
        self.period = period
    }

    /// The code valid at `date`.
    public func code(at date: Date) throws(TOTPError) -> String {
        try code(counter: UInt64(max(0, date.timeIntervalSince1970.rounded(.down))) / UInt64(period))
    }

    /// Seconds until the code valid at `date` changes.
    public func secondsRemaining(at date: Date) -> Int {
        let seconds = Int(max(0, date.timeIntervalSince1970.rounded(.down)))
        return period - seconds % period
    }

    /// The HOTP code for `counter` (RFC 4226, section 5.3: dynamic truncation).
    public func code(counter: UInt64) throws(TOTPError) -> String {
        var bigEndian = counter.bigEndian
        let message = withUnsafeBytes(of: &bigEndian) { Data($0) }
        let mac: Data
        do {
            mac = try OneTimePasswordHMAC.authenticationCode(algorithm, key: secret, message: message)
        } catch {
            throw .unsupported("HMAC failed: \(error)")
        }
        let bytes = [UInt8](mac)
        let offset = Int(bytes[bytes.count - 1] & 0x0F)
        var value = UInt32(bytes[offset] & 0x7F) << 24 | UInt32(bytes[offset + 1]) << 16
            | UInt32(bytes[offset + 2]) << 8 | UInt32(bytes[offset + 3])
        switch encoding {
        case .digits(let count):
            var modulus: UInt64 = 1
            for _ in 0..<count { modulus *= 10 }
            let number = String(UInt64(value) % modulus)
            return String(repeating: "0", count: count - number.count) + number
        case .steam:
            let alphabet = Array("23456789BCDFGHJKMNPQRTVWXY")
            var code = ""
            for _ in 0..<5 {
                code.append(alphabet[Int(value % UInt32(alphabet.count))])
                value /= UInt32(alphabet.count)
            }
            return code
        }
    }
}

/// Why an entry's one-time-password configuration cannot be used.
public enum TOTPError: Error, Equatable, CustomStringConvertible {
    case invalidSecret(String)
    case invalidParameter(String)
    case unsupported(String)

    /// The configuration without its secret.
    public var description: String {
        switch self {
        case .invalidSecret(let detail): "invalid TOTP secret: \(detail)"
        case .invalidParameter(let detail): "invalid TOTP setting: \(detail)"
        case .unsupported(let detail): "unsupported TOTP configuration: \(detail)"
        }
    }
}

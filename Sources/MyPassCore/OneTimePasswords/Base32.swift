public import Foundation

/// RFC 4648 Base32 as authenticator apps write secrets: case-insensitive, spaces, dashes and
/// padding ignored.
public enum Base32 {
    /// The bytes of `text`, or nil when it holds a character outside the alphabet.
    public static func decode(_ text: String) -> Data? {
        var buffer: UInt64 = 0
        var bits = 0
        var output = Data()
        for character in text.uppercased().unicodeScalars {
            let value: UInt64
            switch character {
            case "A"..."Z": value = UInt64(character.value - 65)
            case "2"..."7": value = UInt64(character.value - 50 + 26)
            case " ", "-", "=", "\t", "\n", "\r": continue
            default: return nil
            }
            buffer = buffer << 5 | value
            bits += 5
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: buffer >> UInt64(bits)))
                buffer &= (1 << UInt64(bits)) - 1
            }
        }
        return output
    }
}

/// Text from a vault or a shared folder (titles, group and field names, file names) made safe for a
/// terminal: a name planted in a synced folder, or a title from another device, must not move the
/// cursor, retitle the window, clear the screen or fake a line of output. C0 controls (newline and
/// tab included), DEL and the C1 controls become visible escapes (`\n`, `\t`, `\x1b`, `\u{9b}`).
/// JSON output is left to the JSON encoder.
enum TerminalText {
    static func safe(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            guard isControl(scalar) else {
                result.unicodeScalars.append(scalar)
                continue
            }
            switch scalar {
            case "\n": result += "\\n"
            case "\t": result += "\\t"
            case "\r": result += "\\r"
            default:
                let hex = String(scalar.value, radix: 16)
                result += scalar.value < 0x80 ? "\\x" + (hex.count == 1 ? "0" + hex : hex) : "\\u{\(hex)}"
            }
        }
        return result
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }
}

extension String {
    /// `TerminalText.safe(self)`.
    var terminalSafe: String { TerminalText.safe(self) }
}

/// Text from a vault or a file name made inert for a one-line display (a diff line, a notice): every
/// character that could break the line, move the cursor or reorder what is shown is written as a
/// visible escape, so no title, name or value can forge a line or hide its neighbour.
public enum InertText {
    /// `text` with line breaks, tabs and backslashes escaped (`\n`, `\r`, `\t`, `\\`) and every other
    /// control (C0, DEL, C1 such as U+0085 and U+009B), line or paragraph separator (U+2028, U+2029)
    /// and invisible format character (the bidirectional overrides and isolates U+202A–U+202E and
    /// U+2066–U+2069, marks, zero-width characters) as `\u{HEX}`.
    public static func escaped(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case "\\": result += "\\\\"
            default:
                if needsEscape(scalar) {
                    result += "\\u{" + String(scalar.value, radix: 16) + "}"
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result
    }

    /// `text` made inert and cut to at most `limit` characters (an ellipsis marks a cut).
    public static func escaped(_ text: String, limit: Int) -> String {
        let inert = escaped(text)
        guard inert.count > limit else { return inert }
        return String(inert.prefix(max(0, limit - 1))) + "…"
    }

    /// Whether `scalar` is escaped: a control, a line or paragraph separator, or a format character.
    static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator: true
        default: false
        }
    }
}

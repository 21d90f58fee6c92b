/// Path arithmetic on strings. Not NSString's: in swift-corelibs-foundation 6.3
/// `deletingLastPathComponent` traps on a one-character relative path ("s", "s/"), which is what a
/// user gives as `--state-dir s` or a vault named `v`, and `lastPathComponent` traps on names with
/// repeated slashes and line or paragraph separators (`/s///\u{1B}/\u{2028}x`), which anyone who
/// can write into a synced folder can plant.
package enum PathText {
    /// The folder part of `path`: "" for a bare name, "/" for a name at the root; trailing slashes
    /// are ignored (`a/b/` → `a`).
    package static func folder(of path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return "" }
        var head = trimmed[..<slash]
        while head.count > 1 && head.hasSuffix("/") { head = head.dropLast() }
        return head.isEmpty ? "/" : String(head)
    }

    /// The last component of `path` (trailing slashes ignored): "v.kdbx" for "/a/v.kdbx", "b" for "a/b/".
    package static func name(of path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return String(trimmed) }
        let name = trimmed[trimmed.index(after: slash)...]
        return name.isEmpty ? "/" : String(name)
    }

    /// `name` in `folder` (one slash between them).
    package static func joining(_ folder: String, _ name: String) -> String {
        folder.hasSuffix("/") ? folder + name : folder + "/" + name
    }

    /// The extension of the last component (after its last dot; "" when none).
    package static func pathExtension(of path: String) -> String {
        let name = name(of: path)
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "" }
        return String(name[name.index(after: dot)...])
    }
}

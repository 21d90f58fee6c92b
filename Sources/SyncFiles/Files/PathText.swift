/// Path arithmetic on strings. Not NSString's: in swift-corelibs-foundation 6.3
/// `deletingLastPathComponent` traps on a one-character relative path ("s", "s/"), which is what a
/// user gives as `--state-dir s` or a vault named `v`.
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
}

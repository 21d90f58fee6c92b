internal import CPSL
internal import Foundation
#if canImport(Glibc)
internal import Glibc
#endif

/// Which Public Suffix List decides registrable domains, and how recent it is.
public struct PublicSuffixListSource: Sendable, Encodable, Equatable {
    /// The file loaded, or "built into libpsl".
    public let source: String
    /// The list's date (the file's modification time), ISO 8601.
    public let date: String
}

/// Registrable domains ("the site": a public suffix plus one label) from the whole Public Suffix
/// List through libpsl: ICANN and PRIVATE sections (`web.app`, `myshopify.com`, `s3.amazonaws.com`
/// are suffixes: two customers there are two owners), wildcard and exception rules. The list
/// Debian's `publicsuffix` package keeps current is preferred; libpsl's built-in copy is the fallback.
public enum PublicSuffixList {
    /// Debian's copy of the list, in libpsl's compact form.
    static let installedList = "/usr/share/publicsuffix/public_suffix_list.dafsa"

    /// The loaded list.
    /// Unchecked: the libpsl context (a C pointer) is read-only once loaded, and libpsl reads it safely from any thread.
    private final class Loaded: @unchecked Sendable {
        /// nil: no list could be loaded; then no two hosts are one site unless one is a subdomain of
        /// the other (the safe side: nothing is suggested across sites).
        let context: OpaquePointer?
        let source: PublicSuffixListSource

        init() {
            let formatter = ISO8601DateFormatter()
            var status = stat()
            if let context = psl_load_file(PublicSuffixList.installedList), stat(PublicSuffixList.installedList, &status) == 0 {
                self.context = context
                source = PublicSuffixListSource(source: PublicSuffixList.installedList,
                                                date: formatter.string(from: Date(timeIntervalSince1970: Double(status.st_mtim.tv_sec))))
            } else if let builtin = psl_builtin() {
                context = builtin
                source = PublicSuffixListSource(source: "built into libpsl",
                                                date: formatter.string(from: Date(timeIntervalSince1970: Double(psl_builtin_file_time()))))
            } else {
                context = nil
                source = PublicSuffixListSource(source: "none (only a host and its subdomains are one site)", date: "")
            }
        }
    }

    private static let loaded = Loaded()

    /// The list in use.
    public static var source: PublicSuffixListSource { loaded.source }

    /// The registrable domain of `host` (lower case, ASCII: `xn--` labels), or nil when `host` is
    /// itself a public suffix or has none.
    static func registrableDomain(of host: String) -> String? {
        guard let context = loaded.context else { return nil }
        return host.withCString { name in psl_registrable_domain(context, name).map { String(cString: $0) } }
    }
}

internal import CIDN2
#if canImport(Glibc)
internal import Glibc
#endif

/// Host names in their ASCII form through libidn2 (IDNA2008 with the UTS#46 mapping,
/// non-transitional, NFC input): `bücher.example` is `xn--bcher-kva.example`, so that a name
/// typed in either form is the same host and a look-alike in another script is another one.
enum InternationalDomainName {
    /// `host` in ASCII, or nil when it is not a valid internationalised name. ASCII names are kept as
    /// they are (they may carry characters IDNA refuses, such as `_`, in local names).
    static func ascii(_ host: String) -> String? {
        if host.utf8.allSatisfy({ $0 < 0x80 }) { return host }
        var output: UnsafeMutablePointer<CChar>?
        let flags = Int32(IDN2_NFC_INPUT.rawValue | IDN2_NONTRANSITIONAL.rawValue)
        guard idn2_to_ascii_8z(host, &output, flags) == Int32(IDN2_OK.rawValue), let output else { return nil }
        defer { idn2_free(output) }
        return String(cString: output)
    }
}

internal import Foundation

/// What the system asks credentials for: a web page (URL), a domain, or an app (bundle identifier or
/// Android package, `androidapp://…`).
public enum ServiceIdentifier: Sendable, Equatable {
    case url(String)
    case domain(String)
    case app(String)

    /// Reads a command-line argument: `androidapp://ID` or `iosapp://ID` is an app, anything with a
    /// scheme a URL, else a domain.
    public init(parsing text: String) {
        let lower = text.lowercased()
        if lower.hasPrefix("androidapp://") || lower.hasPrefix("iosapp://") {
            self = .app(String(text.split(separator: "/", omittingEmptySubsequences: true).last ?? ""))
        } else if text.contains("://") {
            self = .url(text)
        } else {
            self = .domain(text)
        }
    }
}

/// A host and port as compared for AutoFill: lower case, without a trailing dot, internationalised
/// names in their `xn--` form.
struct ServiceHost: Equatable {
    let name: String
    let port: Int?

    /// The host of `text`, a URL with or without a scheme (`github.com/login` is read as https).
    init?(_ text: String) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else { return nil }
        let withScheme = trimmed.contains("://") ? trimmed : "https://" + trimmed
        guard let schemeEnd = withScheme.range(of: "://") else { return nil }
        var authority = String(withScheme[schemeEnd.upperBound...].prefix { $0 != "/" && $0 != "?" && $0 != "#" })
        if let at = authority.lastIndex(of: "@") { authority = String(authority[authority.index(after: at)...]) }
        var port: Int?
        if authority.hasPrefix("[") {  // IPv6 literal
            guard let close = authority.firstIndex(of: "]") else { return nil }
            let rest = authority[authority.index(after: close)...]
            if rest.hasPrefix(":") { port = Int(rest.dropFirst()) }
            authority = String(authority[...close])
        } else if let colon = authority.lastIndex(of: ":") {
            guard let number = Int(authority[authority.index(after: colon)...]) else { return nil }
            port = number
            authority = String(authority[..<colon])
        }
        var host = authority.lowercased()
        while host.hasSuffix(".") { host.removeLast() }
        let labels = host.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard !host.isEmpty, labels.allSatisfy({ !$0.isEmpty }) else { return nil }
        guard let ascii = InternationalDomainName.ascii(host) else { return nil }
        let scheme = withScheme[..<schemeEnd.lowerBound].lowercased()
        let defaultPort = ["https": 443, "http": 80][scheme]
        self.name = ascii.lowercased()
        self.port = port == defaultPort ? nil : port
    }

    /// Whether the name is an IP address (compared exactly, never by domain).
    var isAddress: Bool {
        name.hasPrefix("[") || name.split(separator: ".").allSatisfy { Int($0) != nil }
    }
}

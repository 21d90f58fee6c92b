import Foundation
import MyPassCore
import Testing

@Suite("AutoFill credential matching")
struct CredentialMatcherTests {
    static func entry(_ title: String, url: String, extra: [String: String] = [:], expires: Timestamp? = nil) -> Entry {
        var times = Times(allAt: Timestamp(unixSeconds: 1_700_000_000))
        if let expires {
            times.expires = true
            times.expiryTime = expires
        }
        var fields = [EntryField(key: "Title", value: .plain(title)), EntryField(key: "URL", value: .plain(url))]
        fields += extra.sorted { $0.key < $1.key }.map { EntryField(key: $0.key, value: .plain($0.value)) }
        return Entry(uuid: UUID(), times: times, fields: fields)
    }

    static func suggested(_ entryURL: String, for service: ServiceIdentifier, extra: [String: String] = [:]) -> Bool {
        let candidate = CredentialMatcher.Candidate(entry: entry("E", url: entryURL, extra: extra), inRecycleBin: false)
        return !CredentialMatcher.filter(entries: [candidate], for: [service]).suggested.isEmpty
    }

    @Test("which entry URLs are suggested for which service", arguments: [
        // Same host, subdomains, same site.
        ("https://github.com", ServiceIdentifier.url("https://github.com/login"), true),
        ("https://github.com", .url("https://login.github.com/session"), true),
        ("https://login.github.com", .url("https://github.com"), true),
        ("github.com/login", .url("https://github.com"), true),              // scheme-less entry URL
        ("https://GitHub.com.", .domain("github.com"), true),                // case, trailing dot
        ("https://github.com:443", .url("https://github.com"), true),        // default port
        // Look-alikes and other sites.
        ("https://github.com", .url("https://evilgithub.com"), false),
        ("https://github.com", .url("https://github.com.evil.io"), false),
        ("https://github.com", .url("https://github.co"), false),
        ("https://github.com", .url("https://user:pw@evil.io/github.com"), false),
        ("https://github.com", .url("https://github.com@evil.io"), false),
        ("https://github.com", .url("https://gith\u{0443}b.com"), false),    // Cyrillic look-alike
        // Multi-label public suffixes.
        ("https://bank.co.uk", .url("https://login.bank.co.uk"), true),
        ("https://bank.co.uk", .url("https://evil.co.uk"), false),
        ("https://alice.github.io", .url("https://mallory.github.io"), false),
        // Ports.
        ("https://nas.local:5001", .url("https://nas.local:5001/login"), true),
        ("https://nas.local:5001", .url("https://nas.local"), false),
        // IP addresses compare exactly.
        ("http://192.168.1.1", .url("http://192.168.1.1/admin"), true),
        ("http://192.168.1.1", .url("http://192.168.1.10"), false),
        // Internationalised names, either form.
        ("https://xn--bcher-kva.de", .url("https://bücher.de"), true),
        ("https://bücher.de", .url("https://www.xn--bcher-kva.de"), true),
        ("https://bücher.de", .url("https://bucher.de"), false),
        // Apps.
        ("androidapp://com.example.app", .app("com.example.app"), true),
        ("androidapp://com.example.app", .app("com.example.app2"), false),
        ("https://example.com", .app("com.example.app"), false),
    ])
    func rules(entryURL: String, service: ServiceIdentifier, expected: Bool) {
        #expect(Self.suggested(entryURL, for: service) == expected, "\(entryURL) for \(service)")
    }

    /// Platforms that host many customers are public suffixes (the PRIVATE section of the list): two
    /// customers there are two owners. Subdomains of one customer's site are still that customer's.
    @Test("the whole Public Suffix List: never across owners, still across one owner's subdomains", arguments: [
        ("https://alice.web.app/login", ServiceIdentifier.url("https://evil.web.app/"), false),
        ("https://alice.myshopify.com", .url("https://evil.myshopify.com"), false),
        ("https://alice.s3.amazonaws.com", .url("https://evil.s3.amazonaws.com"), false),
        ("https://alice.web.app", .url("https://login.alice.web.app"), true),
        ("https://shop.alice.myshopify.com", .url("https://alice.myshopify.com"), true),
        ("https://alice.github.io", .url("https://bob.github.io"), false),
        ("https://alice.herokuapp.com", .url("https://bob.herokuapp.com"), false),
        ("https://alice.netlify.app", .url("https://bob.netlify.app"), false),
        ("https://alice.pages.dev", .url("https://bob.pages.dev"), false),
        ("https://alice.vercel.app", .url("https://bob.vercel.app"), false),
        ("https://alice.blogspot.com", .url("https://bob.blogspot.com"), false),
        ("https://alice.appspot.com", .url("https://bob.appspot.com"), false),
        ("https://alice.azurewebsites.net", .url("https://bob.azurewebsites.net"), false),
        ("https://d111.cloudfront.net", .url("https://d222.cloudfront.net"), false),
        ("https://www.alice.github.io", .url("https://alice.github.io"), true),
        ("https://api.alice.vercel.app", .url("https://www.alice.vercel.app"), true),
        // Wildcard rule (*.ck: every second-level name is a suffix) and its exception (!www.ck).
        ("https://alice.shop.ck", .url("https://evil.shop.ck"), false),
        ("https://login.alice.shop.ck", .url("https://alice.shop.ck"), true),
        ("https://www.ck", .url("https://login.www.ck"), true),
        // The same across case, trailing dots and both forms of an international name.
        ("https://ALICE.WEB.APP.", .url("https://login.alice.web.app"), true),
        ("https://alice.web.app", .url("https://EVIL.WEB.APP."), false),
        ("https://müller.github.io", .url("https://www.xn--mller-kva.github.io"), true),
        ("https://müller.github.io", .url("https://mueller.github.io"), false),
        // Addresses stay exact.
        ("http://10.0.0.1", .url("http://10.0.0.2"), false),
        ("http://10.0.0.1:8080", .url("http://10.0.0.1:8080/x"), true),
    ])
    func publicSuffixList(entryURL: String, service: ServiceIdentifier, expected: Bool) {
        #expect(Self.suggested(entryURL, for: service) == expected, "\(entryURL) for \(service)")
    }

    @Test("the list in use is named with its date")
    func listSource() {
        #expect(!PublicSuffixList.source.source.isEmpty)
        #expect(PublicSuffixList.source.date.hasPrefix("20"), "\(PublicSuffixList.source)")
    }

    @Test("KeePassXC's additional URL fields are matched too")
    func additionalURLs() {
        #expect(Self.suggested("https://a.example.org", for: .url("https://b.example.net"), extra: ["KP2A_URL": "https://b.example.net"]))
        #expect(Self.suggested("https://a.example.org", for: .url("https://c.example.net"), extra: ["KP2A_URL_1": "https://c.example.net"]))
        #expect(!Self.suggested("https://a.example.org", for: .url("https://d.example.net"), extra: ["Other": "https://d.example.net"]))
    }

    @Test("recycled entries are nowhere, expired and URL-less ones only in all; exact hosts first")
    func lists() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let exact = Self.entry("exact", url: "https://github.com")
        let site = Self.entry("site", url: "https://gist.github.com")
        let expired = Self.entry("expired", url: "https://github.com", expires: Timestamp(unixSeconds: 1_750_000_000))
        let noURL = Self.entry("no url", url: "")
        let recycled = Self.entry("recycled", url: "https://github.com")
        let candidates = [site, exact, expired, noURL].map { CredentialMatcher.Candidate(entry: $0, inRecycleBin: false) }
            + [CredentialMatcher.Candidate(entry: recycled, inRecycleBin: true)]
        let result = CredentialMatcher.filter(entries: candidates, for: [.url("https://github.com/login")], now: now)
        #expect(result.suggested.map(\.title) == ["exact", "site"])
        #expect(Set(result.all.map(\.title)) == ["exact", "site", "expired", "no url"])
    }

    @Test("command-line service identifiers: URLs, domains and apps")
    func parsing() {
        #expect(ServiceIdentifier(parsing: "https://github.com/x") == .url("https://github.com/x"))
        #expect(ServiceIdentifier(parsing: "github.com") == .domain("github.com"))
        #expect(ServiceIdentifier(parsing: "androidapp://com.example.app") == .app("com.example.app"))
    }
}

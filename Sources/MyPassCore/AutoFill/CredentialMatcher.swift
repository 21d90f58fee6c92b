public import Foundation

/// The AutoFill extension's list: which entries to suggest for a service, and all usable entries.
public enum CredentialMatcher {
    /// An entry with where it lives (entries in the recycle bin are never offered).
    public struct Candidate: Sendable {
        /// The entry.
        public let entry: Entry
        /// Whether it is in the recycle bin (never suggested).
        public let inRecycleBin: Bool

        /// A candidate.
        public init(entry: Entry, inRecycleBin: Bool) {
            self.entry = entry
            self.inRecycleBin = inRecycleBin
        }
    }

    /// The entries suggested, best first, and every candidate considered.
    public struct Result: Sendable {
        /// Entries for this service, best first (exact host, then same site).
        public let suggested: [Entry]
        /// Every entry outside the recycle bin, for the "other passwords" list.
        public let all: [Entry]
    }

    /// Suggests the entries whose URLs (URL and KeePassXC's additional `KP2A_URL…` fields) belong to
    /// the same site as one of `identifiers`: the same host, a subdomain, or the same registrable
    /// domain (`login.github.com` for `github.com`; never `evilgithub.com` or `github.com.evil.io`);
    /// ports must agree when the entry names one; apps match their `androidapp://` / `iosapp://` URL
    /// exactly. Expired and recycled entries are never suggested.
    public static func filter(entries candidates: [Candidate], for identifiers: [ServiceIdentifier], now: Date = Date()) -> Result {
        let usable = candidates.filter { !$0.inRecycleBin }.map(\.entry)
        var ranked: [(entry: Entry, rank: Int)] = []
        for entry in usable {
            if entry.times.expires && entry.times.expiryTime.date <= now { continue }
            let ranks = identifiers.compactMap { identifier in bestRank(of: entry, for: identifier) }
            if let rank = ranks.min() { ranked.append((entry, rank)) }
        }
        let suggested = ranked.enumerated().sorted { ($0.element.rank, $0.offset) < ($1.element.rank, $1.offset) }.map(\.element.entry)
        return Result(suggested: suggested, all: usable)
    }

    /// The URLs an entry offers.
    static func urls(of entry: Entry) -> [String] {
        entry.fields.filter { $0.key == EntryField.url || $0.key.hasPrefix("KP2A_URL") }.map(\.value.text).filter { !$0.isEmpty }
    }

    /// 0: same host; 1: same site (subdomain or sibling); nil: no match.
    private static func bestRank(of entry: Entry, for identifier: ServiceIdentifier) -> Int? {
        let entryURLs = urls(of: entry)
        switch identifier {
        case .app(let id):
            let wanted = id.lowercased()
            return entryURLs.contains { url in
                let lower = url.lowercased()
                return (lower.hasPrefix("androidapp://") || lower.hasPrefix("iosapp://"))
                    && lower.split(separator: "/", omittingEmptySubsequences: true).last.map(String.init) == wanted
            } ? 0 : nil
        case .url(let text), .domain(let text):
            guard let service = ServiceHost(text) else { return nil }
            return entryURLs.compactMap { url -> Int? in
                let lower = url.lowercased()
                guard !lower.hasPrefix("androidapp://"), !lower.hasPrefix("iosapp://"), let host = ServiceHost(url) else { return nil }
                return rank(entry: host, service: service, identifierIsDomain: { if case .domain = identifier { true } else { false } }())
            }.min()
        }
    }

    private static func rank(entry: ServiceHost, service: ServiceHost, identifierIsDomain: Bool) -> Int? {
        if let port = entry.port, !identifierIsDomain, port != service.port { return nil }
        if entry.name == service.name { return 0 }
        if entry.isAddress || service.isAddress { return nil }
        guard let site = PublicSuffixList.registrableDomain(of: entry.name), PublicSuffixList.registrableDomain(of: service.name) == site else { return nil }
        return 1
    }
}

extension Vault {
    /// Every entry of the vault as an AutoFill candidate, with whether it is in the recycle bin.
    public var autoFillCandidates: [CredentialMatcher.Candidate] {
        var candidates: [CredentialMatcher.Candidate] = []
        root.forEachGroup { group, _ in
            let recycled = isInRecycleBin(group: group.uuid)
            candidates += group.entries.map { .init(entry: $0, inRecycleBin: recycled) }
        }
        return candidates
    }
}

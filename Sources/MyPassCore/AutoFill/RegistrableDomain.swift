/// The registrable domain of a host ("the site"): its public suffix plus one label. A small bundled
/// list covers the multi-part suffixes in common use; any other suffix is the last label.
enum RegistrableDomain {
    /// Public suffixes of more than one label (from the Public Suffix List; not exhaustive).
    static let multiLabelSuffixes: Set<String> = [
        "co.uk", "org.uk", "ac.uk", "gov.uk", "me.uk", "net.uk", "ltd.uk", "plc.uk", "nhs.uk",
        "com.au", "net.au", "org.au", "edu.au", "gov.au", "id.au",
        "co.nz", "org.nz", "net.nz", "govt.nz", "ac.nz",
        "co.jp", "ne.jp", "or.jp", "ac.jp", "go.jp",
        "com.br", "net.br", "org.br", "gov.br",
        "com.cn", "net.cn", "org.cn", "gov.cn", "com.hk", "com.tw", "com.sg", "com.my",
        "co.in", "net.in", "org.in", "gov.in", "co.kr", "or.kr", "co.za", "org.za", "gov.za",
        "com.mx", "com.ar", "com.co", "com.tr", "gov.tr", "co.il", "org.il", "com.ua", "co.id", "or.id",
        "github.io", "gitlab.io", "herokuapp.com", "azurewebsites.net", "cloudfront.net", "blogspot.com",
        "netlify.app", "vercel.app", "pages.dev", "workers.dev", "appspot.com", "firebaseapp.com",
    ]

    /// The registrable domain of `host`, or nil when `host` is itself a public suffix.
    static func of(_ host: String) -> String? {
        let labels = host.split(separator: ".").map(String.init)
        guard labels.count >= 2 else { return nil }
        let lastTwo = labels.suffix(2).joined(separator: ".")
        if multiLabelSuffixes.contains(lastTwo) {
            return labels.count >= 3 ? labels.suffix(3).joined(separator: ".") : nil
        }
        return lastTwo
    }
}

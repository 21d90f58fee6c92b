import Foundation
@testable import MyPassCore
import Testing

@Suite("Model values: timestamps, protected values, binary pool")
struct ModelTests {
    @Test("ISO 8601 times round trip and agree with Unix time", arguments: [
        ("1970-01-01T00:00:00Z", Int64(0)),
        ("2000-02-29T12:34:56Z", 951_827_696),
        ("2026-11-29T14:20:55Z", 1_795_962_055),
        ("0001-01-01T00:00:00Z", -62_135_596_800),
        ("9999-12-31T23:59:59Z", 253_402_300_799),
    ])
    func iso8601(text: String, unix: Int64) throws {
        let time = try #require(Timestamp(iso8601: text))
        #expect(time.unixSeconds == unix)
        #expect(time.iso8601 == text)
    }

    @Test("offsets and fractions are accepted; garbage is not")
    func iso8601Variants() {
        #expect(Timestamp(iso8601: "2026-01-01T01:00:00+01:00")?.iso8601 == "2026-01-01T00:00:00Z")
        #expect(Timestamp(iso8601: "2026-01-01T00:00:00.123Z")?.iso8601 == "2026-01-01T00:00:00Z")
        for bad in ["", "2026-13-01T00:00:00Z", "2026-01-01", "2026-01-01T00:00:00Zjunk", "AAAAAAAAAAA="] {
            #expect(Timestamp(iso8601: bad) == nil, "\(bad)")
        }
    }

    @Test("a protected value never shows its text and is not stored in plain")
    func protectedValue() {
        let secret = "correct horse battery staple"
        let value = ProtectedValue(secret)
        #expect(value.reveal() == secret)
        #expect(!value.description.contains("horse"))
        #expect(!String(reflecting: value).contains("horse"))
        // What is stored: masked bytes of the same length, never the text.
        let stored = value.maskedBytes
        #expect(stored.count == secret.utf8.count && stored != Array(secret.utf8))
        #expect(!String(decoding: stored, as: UTF8.self).contains("horse"))
        // And nothing reachable by reflection holds the text either.
        let mirror = Mirror(reflecting: value)
        #expect(mirror.children.count == 1, "one stored property: the masked storage")
        for child in mirror.children {
            #expect(!String(describing: child.value).contains("horse"))
            #expect((child.value as? String) == nil)
        }
        #expect(value == ProtectedValue(secret))
        #expect(value != ProtectedValue(secret + "!"))
        #expect(FieldValue.protected(value).description == "ProtectedValue(hidden)")
    }

    @Test("the binary pool stores equal content once and keeps the protect flag")
    func binaryPool() {
        var pool = BinaryPool()
        let first = pool.add(Data("same".utf8), isProtected: false)
        let second = pool.add(Data("same".utf8), isProtected: true)
        #expect(first == second)
        #expect(pool.binaries.count == 1)
        #expect(pool[first]?.isProtected == true)
        #expect(first.sha256 == "0967115f2813a3541eaef77de9d9d5773f1c0c04314b0bbfe4ff3b3b1c55b5d5")
        pool.retainOnly([])
        #expect(pool.binaries.isEmpty)
    }
    @Test("an entry's content digest ignores field order and empty standard fields, and sees every value")
    func contentDigest() {
        let time = Timestamp(iso8601: "2026-02-01T10:00:00Z")!
        let id = UUID()
        func entry(_ fields: [(String, String)], tags: [String] = []) -> Entry {
            Entry(uuid: id, tags: tags, times: Times(allAt: time),
                  fields: fields.map { EntryField(key: $0.0, value: FieldValue($0.1, isProtected: $0.0 == "Password")) })
        }
        // Insertion order without empty fields (mypass-sync) vs sorted with every standard field (KeePassXC).
        let ours = entry([("Title", "Mail"), ("UserName", "alice"), ("Custom", "x")], tags: ["b", "a"])
        let theirs = entry([("Custom", "x"), ("Notes", ""), ("Password", ""), ("Title", "Mail"), ("URL", ""), ("UserName", "alice")],
                           tags: ["a", "b"])
        #expect(ours.contentDigest == theirs.contentDigest)
        #expect(ours.contentDigest != entry([("Title", "Mail"), ("UserName", "alice2"), ("Custom", "x")], tags: ["a", "b"]).contentDigest)
        #expect(ours.contentDigest != entry([("Title", "Mail"), ("UserName", "alice"), ("Custom", "")], tags: ["a", "b"]).contentDigest)
        #expect(ours.contentDigest != entry([("Title", "Mail"), ("UserName", "alice"), ("Custom", "x")], tags: ["a"]).contentDigest)
    }

    @Test("comparing content directly agrees with the content digest for every pair of variants")
    func contentEqualityMatchesDigest() {
        let time = Timestamp(iso8601: "2026-02-01T10:00:00Z")!
        let base = Entry(uuid: UUID(), tags: ["a", "b"], times: Times(allAt: time),
                         fields: [EntryField(key: "Title", value: .plain("Mail")), EntryField(key: "Password", value: FieldValue("pw", isProtected: true)),
                                  EntryField(key: "Custom", value: .plain("x"))],
                         attachments: [Attachment(name: "a.txt", binary: BinaryID(sha256: "01")), Attachment(name: "b.txt", binary: BinaryID(sha256: "02"))],
                         customData: [CustomDataItem(key: "k1", value: "v1"), CustomDataItem(key: "k2", value: "v2")])
        var variants: [Entry] = [base]
        func variant(_ change: (inout Entry) -> Void) { var copy = base; change(&copy); variants.append(copy) }
        variant { $0.fields.reverse() }
        variant { $0.fields.append(EntryField(key: "Notes", value: .plain(""))) }
        variant { $0.fields.append(EntryField(key: "Notes", value: .plain("n"))) }
        variant { $0.fields.append(EntryField(key: "Empty", value: .plain(""))) }
        variant { $0.fields[1].value = FieldValue("pw", isProtected: false) }
        variant { $0.fields[1].value = FieldValue("pw2", isProtected: true) }
        variant { $0.fields[0].value = .plain("Mail\u{301}") }
        variant { $0.tags.reverse() }
        variant { $0.tags = ["a"] }
        variant { $0.attachments.reverse() }
        variant { $0.attachments[0].binary = BinaryID(sha256: "03") }
        variant { $0.attachments[0].name = "c.txt" }
        variant { $0.customData.reverse() }
        variant { $0.customData[0].value = "other" }
        variant { $0.customData[0].lastModified = time }
        variant { $0.iconID = 3 }
        variant { $0.customIconUUID = UUID() }
        variant { $0.foregroundColor = "#FF0000" }
        variant { $0.backgroundColor = "#00FF00" }
        variant { $0.overrideURL = "cmd://x" }
        variant { $0.qualityCheck = false }
        variant { $0.times.expires = true }
        variant { $0.times.expiryTime = Timestamp(secondsSinceYearOne: 1) }
        variant { $0.times.lastModified = Timestamp(secondsSinceYearOne: 2) }
        variant { $0.autoType.isEnabled = false }
        variant { $0.autoType.defaultSequence = "{USERNAME}" }
        variant { $0.autoType.associations = [AutoType.Association(window: "w", keystrokeSequence: "s")] }
        variant { $0.history = [base] }
        variant { $0.preserved = [PreservedXML(name: "X", attributes: [], text: "1", children: [])] }
        var same = 0, different = 0
        for first in variants {
            for second in variants {
                let direct = first.hasSameContent(as: second)
                #expect(direct == (first.contentDigest == second.contentDigest))
                if direct { same += 1 } else { different += 1 }
            }
        }
        // Reordering, an empty standard field, custom data times, modification time and history do not count.
        #expect(same == 9 * 9 + (variants.count - 9))
        #expect(different > 0)
    }
}

@Suite("Paths and search in a vault")
struct VaultLookupTests {
    /// Internet/{GitHub, Old/{Archive}}, Hidden (searching off)/{Secret, Sub/{Deep}}, and a recycled entry in a bin subgroup.
    static func vault() throws -> Vault {
        let time = Timestamp(unixSeconds: 1_800_000_000)
        var vault = Vault.empty(name: "lookup", at: time)
        let root = vault.root.uuid
        var added = try vault.addingGroup(named: "Internet", to: root, at: time)
        vault = added.vault
        let internet = added.uuid
        vault = try vault.addingEntry(title: "GitHub", userName: "octo", url: "https://github.com", to: internet, at: time).vault
        added = try vault.addingGroup(named: "Old", to: internet, at: time)
        vault = try added.vault.addingEntry(title: "Archive", notes: "old github account", to: added.uuid, at: time).vault
        added = try vault.addingGroup(named: "Hidden", to: root, at: time)
        let hidden = added.uuid
        vault = try added.vault.updatingGroup(hidden, at: time) { $0.enableSearching = false }
        vault = try vault.addingEntry(title: "Secret github token", to: hidden, at: time).vault
        added = try vault.addingGroup(named: "Sub", to: hidden, at: time)
        vault = try added.vault.addingEntry(title: "Deep github", to: added.uuid, at: time).vault
        let doomed = try vault.addingEntry(title: "Recycled github", to: internet, at: time)
        vault = try doomed.vault.deletingEntry(doomed.uuid, permanently: false, at: time)
        // A group recycled with its entry: a subgroup of the bin.
        added = try vault.addingGroup(named: "Gone", to: root, at: time)
        vault = try added.vault.addingEntry(title: "Gone github", to: added.uuid, at: time).vault
        vault = try vault.deletingGroup(added.uuid, permanently: false, at: time)
        #expect(vault.group(at: VaultPath("/Recycle Bin/Gone")) != nil)
        return vault
    }

    @Test("paths name groups and entries; the leading slash is optional; unknown names are nil")
    func paths() throws {
        let vault = try Self.vault()
        #expect(vault.group(at: VaultPath("/"))?.uuid == vault.root.uuid)
        #expect(vault.group(at: VaultPath("Internet/Old"))?.name == "Old")
        let archive = try #require(vault.entry(at: VaultPath("/Internet/Old/Archive")))
        #expect(vault.path(ofEntry: archive.uuid)?.description == "/Internet/Old/Archive")
        #expect(vault.entry(at: VaultPath("/Internet/Nope")) == nil)
        #expect(vault.entry(at: VaultPath("/")) == nil)
        #expect(VaultPath("a//b/").components == ["a", "b"])
    }

    @Test("search: case-insensitive over title, user name, URL, notes, tags; never in the recycle bin or where searching is off (inherited)")
    func search() throws {
        let vault = try Self.vault()
        let found = vault.searchEntries("GITHUB").map(\.path.description)
        #expect(found == ["/Internet/GitHub", "/Internet/Old/Archive"], "\(found)")
        #expect(vault.searchEntries("octo").map(\.entry.title) == ["GitHub"])
        #expect(vault.searchEntries("nothing like it").isEmpty)
    }
}

@Suite("Vault paths: escaping")
struct VaultPathEscapingTests {
    @Test("generated names with slashes, backslashes, combining marks and other scripts: every slash and backslash escaped, and the path read back to the same names", arguments: 1...4)
    func escapingRoundTrips(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        let alphabet: [Character] = ["a", "Z", "/", "\\", " ", "é", "ß", "日", "👩‍💻", ".", "\u{301}"]
        for _ in 0..<500 {
            let names = (0..<Int.random(in: 1...3, using: &random)).map { _ in
                String((0..<Int.random(in: 1...8, using: &random)).map { _ in alphabet.randomElement(using: &random)! })
            }
            for name in names {
                // Every slash and backslash (by scalar, whatever follows it) is escaped, nothing else changes.
                var unescaped: [Unicode.Scalar] = []
                var scalars = Array(VaultPath.escaped(name).unicodeScalars)[...]
                while let scalar = scalars.popFirst() {
                    if scalar == "\\", let next = scalars.popFirst() {
                        #expect(next == "/" || next == "\\", "seed \(seed): \(name.debugDescription)")
                        unescaped.append(next)
                    } else {
                        #expect(scalar != "/" && scalar != "\\", "seed \(seed): \(name.debugDescription)")
                        unescaped.append(scalar)
                    }
                }
                #expect(String(String.UnicodeScalarView(unescaped)) == name)
            }
            let path = VaultPath(components: names)
            #expect(VaultPath(path.description).components == names, "seed \(seed): \(names.map(\.debugDescription))")
        }
    }
}

/// SplitMix64: a small generator whose sequence depends only on its seed (replayable cases).
private struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

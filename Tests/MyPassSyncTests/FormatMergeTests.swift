import Foundation
import KDBXFormat
import MyPassCore
import MyPassCrypto
import SyncCommit
import Testing
import TestSupport

/// The cipher, KDF and compression merged like settings (MERGE.md rule 13), as a pure decision.
@Suite("Cipher, KDF and compression merged like settings")
struct FormatMergeTests {
    static func argon2(_ variant: Argon2.Variant, memoryMiB: UInt64, iterations: UInt64, salt: UInt8 = 1) -> KDFParameters {
        .argon2(.init(variant: variant, salt: Data(repeating: salt, count: 32), iterations: iterations, memoryBytes: memoryMiB << 20, parallelism: 2))
    }

    static func format(_ cipher: PayloadCipher, _ kdf: KDFParameters, _ compression: PayloadCompression = .gzip) -> FormatSettings {
        FormatSettings(version: .v4_0, cipher: cipher, kdf: kdf, compression: compression)
    }

    static func at(_ seconds: Int64) -> Timestamp { Timestamp(secondsSinceYearOne: 63_900_000_000 + seconds) }

    static func side(_ settings: FormatSettings, _ seconds: Int64?) -> FormatMerge.Side {
        FormatMerge.Side(settings: settings, settingsChanged: seconds.map(at))
    }

    /// What a merge writes, the salt aside.
    static func choice(_ settings: FormatSettings) -> String {
        "\(settings.cipher.rawValue) \(KDFChoice(settings.kdf).text) \(settings.compression.name)"
    }

    static let original = format(.aes256, argon2(.argon2d, memoryMiB: 64, iterations: 10))
    static let switched = format(.chaCha20, argon2(.argon2id, memoryMiB: 64, iterations: 10, salt: 9))

    @Test("one side switched to ChaCha20 and Argon2id: taken in both directions, with the base and without (newer SettingsChanged)")
    func oneSidedSwitchTravels() {
        for ancestor in [Self.original, nil] as [FormatSettings?] {
            let forward = FormatMerge.merge(ancestor: ancestor.map { Self.side($0, 0) }, local: Self.side(Self.original, 0), remote: Self.side(Self.switched, 30))
            let backward = FormatMerge.merge(ancestor: ancestor.map { Self.side($0, 0) }, local: Self.side(Self.switched, 30), remote: Self.side(Self.original, 0))
            #expect(Self.choice(forward.settings) == Self.choice(Self.switched))
            #expect(Self.choice(backward.settings) == Self.choice(Self.switched))
            #expect(forward.changedParts == ["Cipher", "KDF"] && backward.changedParts.isEmpty)
            for note in [forward.note, backward.note] {
                #expect(note?.contains("written with chacha20, argon2id") == true, "\(note ?? "no note")")
            }
        }
    }

    @Test("both changed the KDF and the newer change weakens it: the stronger is kept and the decision says so, both directions")
    func weakerNewerChangeRefused() {
        let strong = Self.format(.aes256, Self.argon2(.argon2d, memoryMiB: 256, iterations: 10))
        let weak = Self.format(.aes256, .aesKDF(seed: Data(repeating: 3, count: 32), rounds: 60_000))
        for (local, remote) in [(Self.side(strong, 10), Self.side(weak, 20)), (Self.side(weak, 20), Self.side(strong, 10))] {
            let outcome = FormatMerge.merge(ancestor: Self.side(Self.original, 0), local: local, remote: remote)
            #expect(Self.choice(outcome.settings) == Self.choice(strong))
            #expect(outcome.decisions.first { $0.field == "KDF" }?.rule == .strongerKDFKept)
            #expect(outcome.note?.contains("weakens") == true)
        }
    }

    @Test("without a base, the newer settings holding a weaker KDF (a stale copy's, say): the stronger is kept and the decision says so, both directions")
    func noBaseKeepsStrongerKDF() {
        let strong = Self.format(.aes256, Self.argon2(.argon2d, memoryMiB: 256, iterations: 10))
        let weak = Self.format(.aes256, Self.argon2(.argon2d, memoryMiB: 16, iterations: 2))
        for (local, remote) in [(Self.side(strong, 10), Self.side(weak, 20)), (Self.side(weak, 20), Self.side(strong, 10))] {
            let outcome = FormatMerge.merge(ancestor: nil, local: local, remote: remote)
            #expect(Self.choice(outcome.settings) == Self.choice(strong))
            #expect(outcome.decisions.first { $0.field == "KDF" }?.rule == .strongerKDFKept)
            #expect(outcome.note?.contains("weakens") == true, "\(outcome.note ?? "no note")")
        }
    }

    @Test("the merged vault, remembered as the base, merged with the unchanged side's stale copy: the switch is kept")
    func staleCopyChangesNothing() {
        let merged = Self.side(Self.switched, 30)
        for (local, remote) in [(merged, Self.side(Self.original, 0)), (Self.side(Self.original, 0), merged)] {
            let outcome = FormatMerge.merge(ancestor: merged, local: local, remote: remote)
            #expect(Self.choice(outcome.settings) == Self.choice(Self.switched))
        }
    }

    /// Three devices from one base: a changes the cipher at 10 s, b the compression at 30 s, c both at
    /// 20 s. By each part's own change time the cipher is c's (20 > 10) and the compression b's
    /// (30 > 20). A merge of a and b holds both under one `SettingsChanged` (a second after b's); each
    /// part keeps the time of the side it came from (`partTimes`, which `SettingTimes` records in the
    /// vault), so c's cipher still wins in every order (the generated scripts' seeds 39 and 85).
    @Test("three devices merging in different orders end with the same format: each part keeps its own change time")
    func threeDeviceOrders() {
        let base = Self.side(Self.original, 0)
        var aFormat = Self.original, bFormat = Self.original, cFormat = Self.original
        aFormat.cipher = .twofish
        bFormat.compression = .none
        cFormat.cipher = .chaCha20
        cFormat.compression = .none
        let a = Self.side(aFormat, 10), b = Self.side(bFormat, 30), c = Self.side(cFormat, 20)
        func merged(_ local: FormatMerge.Side, _ remote: FormatMerge.Side) -> FormatMerge.Side {
            let outcome = FormatMerge.merge(ancestor: base, local: local, remote: remote)
            return FormatMerge.Side(settings: outcome.settings, settingsChanged: outcome.settingsChanged,
                                    partTimes: outcome.partTimes.compactMapValues(\.time))
        }
        let results = [merged(merged(a, b), c), merged(merged(c, a), b), merged(merged(b, c), a)].map { Self.choice($0.settings) }
        let expected = Self.choice(Self.format(.chaCha20, Self.argon2(.argon2d, memoryMiB: 64, iterations: 10), .none))
        #expect(results == [expected, expected, expected], "orders end with \(results)")
        // Merged again with each device, the result stays.
        let result = merged(merged(a, b), c)
        for device in [a, b, c] { #expect(Self.choice(merged(result, device).settings) == expected) }
    }

    @Test("a 3.1 vault taking the other side's Argon2 is written as KDBX 4")
    func argon2RaisesVersion() {
        var old = Self.format(.aes256, .aesKDF(seed: Data(repeating: 3, count: 32), rounds: 60_000))
        old.version = .v3_1
        let outcome = FormatMerge.merge(ancestor: Self.side(old, 0), local: Self.side(old, 0), remote: Self.side(Self.switched, 5))
        #expect(outcome.settings.version == .v4_0)
    }

    /// Random formats for a base and two sides, each side changing some parts at a random time.
    struct Generated {
        var random: SeededRandom

        mutating func kdf() -> KDFParameters {
            switch Int.random(in: 0..<3, using: &random) {
            case 0: .aesKDF(seed: Data(repeating: UInt8.random(in: 0...255, using: &random), count: 32),
                            rounds: [60_000, 100_000, 2_000_000].randomElement(using: &random)!)
            default: FormatMergeTests.argon2(Bool.random(using: &random) ? .argon2d : .argon2id, memoryMiB: [16, 64, 256].randomElement(using: &random)!,
                                             iterations: [2, 10].randomElement(using: &random)!, salt: UInt8.random(in: 0...255, using: &random))
            }
        }

        mutating func format() -> FormatSettings {
            FormatMergeTests.format(PayloadCipher.allCases.randomElement(using: &random)!, kdf(), Bool.random(using: &random) ? .gzip : .none)
        }

        /// `base` with each part replaced at random (about one in two).
        mutating func edited(_ base: FormatSettings) -> FormatSettings {
            let other = format()
            var edited = base
            if Bool.random(using: &random) { edited.cipher = other.cipher }
            if Bool.random(using: &random) { edited.kdf = other.kdf }
            if Bool.random(using: &random) { edited.compression = other.compression }
            return edited
        }
    }

    @Test("generated: never a silently weaker KDF; a one-sided change survives both directions; both directions agree; merging again changes nothing",
          arguments: 0..<300)
    func generated(seed: UInt64) {
        var generator = Generated(random: SeededRandom(seed: 0x464D_0000 + seed))
        let base = generator.format()
        let local = generator.edited(base), remote = generator.edited(base)
        let lTime = Int64.random(in: 0...3, using: &generator.random), rTime = Int64.random(in: 0...3, using: &generator.random)
        for ancestor in [base, nil] as [FormatSettings?] {
            let label = "seed \(seed), \(ancestor == nil ? "no base" : "base")"
            let forward = FormatMerge.merge(ancestor: ancestor.map { Self.side($0, 0) }, local: Self.side(local, lTime), remote: Self.side(remote, rTime))
            let backward = FormatMerge.merge(ancestor: ancestor.map { Self.side($0, 0) }, local: Self.side(remote, rTime), remote: Self.side(local, lTime))
            #expect(Self.choice(forward.settings) == Self.choice(backward.settings), "\(label): the directions disagree")
            let written = KDFChoice(forward.settings.kdf)
            for input in [local, remote] where written != KDFChoice(input.kdf) {
                #expect(forward.note != nil && backward.note != nil, "\(label): the KDF written differs from an input's and nothing says so")
            }
            if ancestor == nil, let stronger = KDFChoice.stronger(KDFChoice(local.kdf), KDFChoice(remote.kdf)) {
                #expect(written == stronger, "\(label): without a base the weaker KDF was taken")
            }
            if ancestor != nil {
                let l = KDFChoice(local.kdf), r = KDFChoice(remote.kdf), b = KDFChoice(base.kdf)
                if l != b && r != b && l != r, let stronger = KDFChoice.stronger(l, r) {
                    #expect(written == stronger, "\(label): both changed the KDF and the weaker was taken")
                }
                for (name, part) in [("cipher", { (f: FormatSettings) in f.cipher.rawValue }), ("kdf", { KDFChoice($0.kdf).text }),
                                     ("compression", { $0.compression.name })] {
                    let lChanged = part(local) != part(base), rChanged = part(remote) != part(base)
                    if lChanged != rChanged {
                        #expect(part(forward.settings) == part(lChanged ? local : remote), "\(label): the one-sided \(name) change was lost")
                    }
                }
            }
            // Merging the result (its SettingsChanged the later of the two) again with either side changes nothing,
            // against the same ancestor or against the result itself (the base the sync state then holds).
            let result = FormatMerge.Side(settings: forward.settings, settingsChanged: forward.settingsChanged)
            #expect(forward.settingsChanged == backward.settingsChanged, "\(label)")
            for (input, time) in [(local, lTime), (remote, rTime)] {
                for again in [FormatMerge.merge(ancestor: ancestor.map { Self.side($0, 0) }, local: result, remote: Self.side(input, time)),
                              FormatMerge.merge(ancestor: ancestor == nil ? nil : result, local: result, remote: Self.side(input, time))] {
                    #expect(again.changedParts.isEmpty && Self.choice(again.settings) == Self.choice(forward.settings),
                            "\(label): merging again changed \(again.changedParts)")
                }
            }
        }
    }
}

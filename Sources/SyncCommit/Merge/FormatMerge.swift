internal import Foundation
package import KDBXFormat
package import MyPassCore
internal import MyPassMerge

/// The format a merged vault is written in (MERGE.md rule 13): the cipher, the KDF with its
/// parameters, and compression each merge like a vault setting. Changed on one side only since the
/// ancestor (without one: the side with the newer `SettingsChanged`) takes that side's value, in both
/// directions; changed differently on both, the newer change wins (by each side's time for that part,
/// `Side.partTimes`, which a merged side carries in `SettingTimes`), except that a change weakening the
/// KDF is never taken: the stronger KDF is kept and the decision says so. Without an ancestor the
/// stronger KDF is kept too (the newer settings may be a stale copy's; a weaker KDF is never a guess). A side whose
/// `SettingsChanged` is older than the ancestor's (a stale copy) changed nothing (MERGE.md rule 3).
/// Pure: the same from both directions; the key is not decided here (the credential rules keep it).
package enum FormatMerge {
    /// One side: the format its file was read in and its `SettingsChanged`.
    package struct Side: Sendable {
        package let settings: FormatSettings
        package let settingsChanged: Timestamp?
        /// When each part (`Cipher`, `KDF`, `Compression`) last changed where known (`SettingTimes`);
        /// a part without one is timed by `settingsChanged`.
        package let partTimes: [String: Timestamp]

        /// The side read in `settings` whose settings last changed at `settingsChanged`.
        package init(settings: FormatSettings, settingsChanged: Timestamp?, partTimes: [String: Timestamp] = [:]) {
            self.settings = settings
            self.settingsChanged = settingsChanged
            self.partTimes = partTimes
        }

        /// The side read in `settings` whose settings are `meta`'s (each part timed by its record).
        package init(settings: FormatSettings, meta: Meta) {
            var times: [String: Timestamp] = [:]
            for (part, value) in FormatMerge.parts(settings) {
                times[part] = SettingTimes.time(of: part, value: value, in: meta)
            }
            self.init(settings: settings, settingsChanged: meta.settingsChanged, partTimes: times)
        }

        func time(of part: String) -> Timestamp? { partTimes[part] ?? settingsChanged }
    }

    /// The parts a format merges, each with its value as text.
    package static func parts(_ settings: FormatSettings) -> [(String, String)] {
        [("Cipher", settings.cipher.rawValue), ("KDF", KDFChoice(settings.kdf).text), ("Compression", settings.compression.name)]
    }

    /// What the merge writes with, and how each differing part was decided.
    package struct Outcome: Sendable {
        /// The settings to write (the local side's where nothing differs).
        package let settings: FormatSettings
        /// One decision per part the sides differ on (`Cipher`, `KDF`, `Compression`).
        package let decisions: [FieldDecision]
        /// The parts whose written value is not the local side's.
        package let changedParts: [String]
        /// Says which cipher, KDF and compression are written and why, when they differ from either
        /// side's (nil when both sides had the same format).
        package let note: String?
        /// The `SettingsChanged` the merged vault carries: the later of the two, or a second after it
        /// when the format written is not that of the side (or both sides) with the latest one. The
        /// merge is then a settings change of its own, so that merging the result again with either
        /// side (or with the result as the base) keeps it.
        package let settingsChanged: Timestamp?
        /// Each part's value and when it last changed: the time of the side it was taken from, or the
        /// later of the two when both hold it (not the merged `settingsChanged`), for `SettingTimes`.
        package let partTimes: [String: (value: String, time: Timestamp?)]
    }

    /// The format for merging `remote` into `local`, with the ancestor's when one is known.
    package static func merge(ancestor: Side?, local: Side, remote: Side) -> Outcome {
        var settings = local.settings
        var decisions: [FieldDecision] = []
        var changedParts: [String] = []
        var reasons: [String] = []

        func decide<T: Equatable>(_ part: String, _ value: (FormatSettings) -> T, text: (T) -> String,
                                  stronger: (T, T) -> T? = { _, _ in nil }) -> Bool {
            let l = value(local.settings), r = value(remote.settings)
            guard l != r else { return false }
            let base = ancestor.map { value($0.settings) }
            let (takeRemote, rule) = choose(base: base, l, r, lTime: local.settingsChanged, rTime: remote.settingsChanged,
                                            lPartTime: local.time(of: part), rPartTime: remote.time(of: part),
                                            baseTime: ancestor?.settingsChanged, stronger: stronger, text: text)
            decisions.append(FieldDecision(subject: .meta, uuid: nil, path: "/", field: part, ancestor: ancestor == nil ? .none : .base,
                                           base: base.map { .value(text($0)) }, local: .value(text(l)), remote: .value(text(r)),
                                           result: takeRemote ? .remote : .local, rule: rule,
                                           localTime: local.settingsChanged, remoteTime: remote.settingsChanged))
            if takeRemote { changedParts.append(part) }
            reasons.append("\(part) from the \(takeRemote ? "remote" : "local") side: \(reason(rule))")
            return takeRemote
        }

        if decide("Cipher", { $0.cipher }, text: { $0.rawValue }) { settings.cipher = remote.settings.cipher }
        if decide("KDF", { KDFChoice($0.kdf) }, text: { $0.text }, stronger: KDFChoice.stronger) {
            settings.kdf = remote.settings.kdf
        }
        if decide("Compression", { $0.compression }, text: { $0.name }) { settings.compression = remote.settings.compression }
        // Argon2 needs KDBX 4: a 3.1 vault taking the other side's Argon2 is written as that side's 4.x.
        if case .argon2 = settings.kdf, !settings.version.isKDBX4 {
            settings.version = remote.settings.version.isKDBX4 ? remote.settings.version : .v4_0
        }
        let note = decisions.isEmpty ? nil
            : "written with \(settings.cipher.rawValue), \(KDFChoice(settings.kdf).text), \(settings.compression.name) compression: "
                + reasons.joined(separator: "; ")
        let latest = [local.settingsChanged, remote.settingsChanged].compactMap { $0 }.max()
        let newestSides = [local, remote].filter { $0.settingsChanged == latest }
        let ownChange = !decisions.isEmpty && newestSides.contains { !sameParts($0.settings, settings) }
        let changed = ownChange ? latest.map { Timestamp(secondsSinceYearOne: $0.secondsSinceYearOne + 1) } ?? local.settingsChanged : latest
        var partTimes: [String: (value: String, time: Timestamp?)] = [:]
        let localParts = Dictionary(uniqueKeysWithValues: parts(local.settings)), remoteParts = Dictionary(uniqueKeysWithValues: parts(remote.settings))
        for (part, value) in parts(settings) {
            partTimes[part] = (value, SettingTimes.merged(part, result: value, local: (localParts[part]!, local.time(of: part)),
                                                          remote: (remoteParts[part]!, remote.time(of: part))))
        }
        return Outcome(settings: settings, decisions: decisions, changedParts: changedParts, note: note, settingsChanged: changed,
                       partTimes: partTimes)
    }

    /// Whether `a` and `b` have the same cipher, KDF (salt aside) and compression.
    static func sameParts(_ a: FormatSettings, _ b: FormatSettings) -> Bool {
        a.cipher == b.cipher && a.compression == b.compression && KDFChoice(a.kdf) == KDFChoice(b.kdf)
    }

    /// Whether the remote value of a part wins, and by which rule. Ties (the same change time or
    /// none) go to the stronger value, else to the larger text: the same from both directions.
    private static func choose<T: Equatable>(base: T?, _ l: T, _ r: T, lTime: Timestamp?, rTime: Timestamp?,
                                             lPartTime: Timestamp?, rPartTime: Timestamp?, baseTime: Timestamp?,
                                             stronger: (T, T) -> T?, text: (T) -> String) -> (takeRemote: Bool, rule: FieldDecision.Rule) {
        let never = Timestamp(secondsSinceYearOne: 0)
        /// Changed since the ancestor: another value, on a side whose settings are not older than the
        /// ancestor's (a side without `SettingsChanged` is older than an ancestor with one).
        func changed(_ value: T, _ time: Timestamp?) -> Bool {
            guard value != base else { return false }
            guard let baseTime else { return true }
            return (time ?? never) >= baseTime
        }
        let lChanged = changed(l, lTime), rChanged = changed(r, rTime)
        if base != nil, lChanged != rChanged {
            return rChanged ? (true, .onlyRemoteChanged) : (false, .onlyLocalChanged)
        }
        // Neither changed it: a stale side's other value is no edit; the side still at the ancestor's value stays.
        if base != nil, !lChanged, l == base || r == base { return (r == base, .staleVersionIgnored) }
        // Which change is newer: with the base, each side's time for this part (a merged side's
        // SettingsChanged may be a later part's, or a second after it); without one, the side whose
        // settings changed later.
        let lt = (base == nil ? lTime : lPartTime) ?? never, rt = (base == nil ? rTime : rPartTime) ?? never
        let strongest = stronger(l, r)
        let newerIsRemote: Bool
        if lt != rt {
            newerIsRemote = rt > lt
        } else if let strongest {
            newerIsRemote = strongest == r
        } else {
            newerIsRemote = text(l).utf8.lexicographicallyPrecedes(text(r).utf8)
        }
        // Both changed it, or no ancestor tells which did: the newer change, unless it is the weaker of
        // the two (without an ancestor, the newer settings may be a stale copy's: never weaken on a guess).
        if let strongest, strongest != (newerIsRemote ? r : l) { return (strongest == r, .strongerKDFKept) }
        guard base != nil else { return (newerIsRemote, .noAncestorNewerWins) }
        return (newerIsRemote, .conflictNewerWins)
    }

    private static func reason(_ rule: FieldDecision.Rule) -> String {
        switch rule {
        case .onlyLocalChanged: "only it changed this since the base"
        case .onlyRemoteChanged: "only it changed this since the base"
        case .strongerKDFKept: "the newer change weakens the key derivation, so the stronger is kept"
        case .noAncestorNewerWins: "no base; its settings changed later (SettingsChanged)"
        case .staleVersionIgnored: "the other side's settings are older than the base's (a stale copy)"
        default: "both changed it; its change is the newer (SettingsChanged)"
        }
    }
}

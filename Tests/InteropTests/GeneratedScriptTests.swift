import Foundation
import KDBXFormat
import MyPassCore
import MyPassMerge
import SyncCommit
import Synchronization
import Testing

/// Random edit scripts applied by the real clients (keepassxc-cli where it can: edit, mv, rm;
/// pykeepass for the rest of the XML: entries, groups, every Meta setting, the recycle bin; this
/// library as a third device, and for the cipher/KDF/compression conversions no client here can
/// make) to copies of one base, merged as `merge` merges files (`MergeCommit`, with each file's
/// format and the base's) in every order with and without the base. Seeded and replayable:
/// `MYPASS_SCRIPT_SEED` (first seed, default 1) and `MYPASS_SCRIPT_COUNT` (default 300, about 16 s;
/// without a seed given, the seeds soak runs found failing are played too);
/// `MYPASS_SCRIPT_KEEP=<dir>` keeps failing scripts' files and `problems.txt`;
/// `MYPASS_SCRIPT_VERBOSE=1` prints failing scripts' steps. Shapes found and not yet fixed are
/// marked known (`knownMark`) and reported as known issues, never dropped. The soak (3000 scripts,
/// about 2.5 minutes):
///
///     MYPASS_SCRIPT_COUNT=3000 MYPASS_SCRIPT_SEED=1000 swift test --filter GeneratedScriptTests
@Suite("Generated edit scripts through the real clients", .serialized)
struct GeneratedScriptTests {
    static let environment = ProcessInfo.processInfo.environment
    static let count = UInt64(environment["MYPASS_SCRIPT_COUNT"] ?? "") ?? 300
    static let firstSeed = UInt64(environment["MYPASS_SCRIPT_SEED"] ?? "") ?? 1
    /// Seeds soak runs found failing, replayed by every default run (bins, association order, a
    /// conflict reported again, a recycled entry deleted again, history at its limit, where an entry
    /// kept against a deletion ends up, a field set on one device under a later save without a change
    /// on another).
    static let foundBySoaks: [UInt64] = [1036, 1055, 1113, 1119, 1159, 1160, 1197, 1279, 1293, 1445, 1494, 1617, 1686, 1934, 2040, 2205, 2432, 2594, 2606, 2950, 3365, 3471, 3781, 5511, 5877, 8117, 8283, 9102, 9519, 9768]
    /// The seeds this run plays.
    static var seeds: [UInt64] {
        let range = Array(firstSeed..<(firstSeed + count))
        return environment["MYPASS_SCRIPT_SEED"] == nil ? range + foundBySoaks.filter { !range.contains($0) } : range
    }

    /// One script: its devices' files and what each device set.
    struct Case {
        let seed: UInt64
        let devices: ClientDevices
        var scripts: [String: EditScript] = [:]
    }

    /// A device's version: its content and the format its file is written in.
    struct Side {
        var vault: Vault
        var format: FormatSettings
    }

    /// A merge as `merge` makes it (`MergeCommit`: the content through `VaultMerger`, the cipher, KDF
    /// and compression through `FormatMerge`), and what it reported.
    struct Merged {
        let side: Side
        let changes: [Change]
        let warnings: [String]
        var vault: Vault { side.vault }
    }

    @Test("no value lost, both directions alike, a second merge changes nothing (content, settings, format), three devices converge, one-sided settings kept, no silently weaker KDF, no duplicate or dead-listed object, one recycle bin")
    func generatedScripts() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("mypass-scripts-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        let base = try ShapeVault.make()
        let clock = Timestamp.now().adding(10)  // pykeepass steps come after keepassxc-cli's wall-clock edits
        var cases: [Case] = []
        for seed in Self.seeds {
            var random = ScriptRandom(seed: seed)
            var item = Case(seed: seed, devices: try ClientDevices.make(base, devices: ["a", "b"], in: root))
            for device in ["a", "b", "c"] {
                item.scripts[device] = EditScript.random(seed: seed, device: device, count: Int.random(in: 1...6, using: &random), using: &random,
                                                         withKeePassXC: device == "a" && seed % 3 == 0)
            }
            // The same change made on devices a and b (after their own steps).
            let shared = EditScript.shared(seed: seed, using: &random)
            for device in ["a", "b"] { item.scripts[device] = item.scripts[device]!.followed(by: shared) }
            cases.append(item)
        }
        // keepassxc-cli first (on the base's layout), two at a time; then one python process for every pykeepass job.
        let edits = cases.compactMap { item in item.scripts["a"]?.keepassxc.map { (item.devices.path("a"), $0) } }
        let failures = FailureList()
        DispatchQueue.concurrentPerform(iterations: edits.count) { index in
            let (path, arguments) = edits[index]
            do { try ClientDevices.keepassxc([arguments[0], "-q"] + arguments.dropFirst().map { $0 == "database" ? path.path : $0 }) } catch {
                failures.add("keepassxc-cli: \(error)")
            }
        }
        #expect(failures.all.isEmpty, "\(failures.all.prefix(3))")
        try ClientDevices.pykeepass(cases.flatMap { item in
            ["a", "b"].map { (item.devices.path($0), clock, item.scripts[$0]!.pykeepass) }
        })
        // Last, a device's conversion (cipher, KDF, compression) with the library, as `convert` makes it.
        for item in cases {
            for device in ["a", "b"] {
                guard let format = item.scripts[device]!.convert else { continue }
                var vault = try item.devices.open(device)
                vault.meta.settingsChanged = clock.adding(60)
                try item.devices.write(vault, as: device, settings: format)
            }
        }
        var problems: [String] = [], failingSeeds: [UInt64] = []
        if let keep = Self.environment["MYPASS_SCRIPT_KEEP"] {
            try FileManager.default.createDirectory(atPath: keep, withIntermediateDirectories: true)
        }
        for item in cases {
            let found = try check(item, base: base, clock: clock)
            if !found.isEmpty { failingSeeds.append(item.seed) }
            problems += found.map { "seed \(item.seed): \($0)" }
            if Self.environment["MYPASS_SCRIPT_VERBOSE"] != nil, !found.isEmpty {
                for (device, script) in item.scripts.sorted(by: { $0.key < $1.key }) {
                    print("seed \(item.seed) device \(device): keepassxc \(script.keepassxc ?? []), convert \(script.convert.map { "\($0.cipher) \(KDFChoice($0.kdf).text) \($0.compression.name)" } ?? "none")")
                    for op in script.pykeepass { print("  \(op.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))") }
                }
            }
            if let keep = Self.environment["MYPASS_SCRIPT_KEEP"], !found.isEmpty {
                try item.devices.write(try LibraryDevice.apply(item.scripts["c"]!, to: base, from: clock.adding(1)), as: "c",
                                       settings: item.scripts["c"]!.convert ?? ClientDevices.settings)
                for name in ["base", "a", "b", "c"] {
                    try? FileManager.default.copyItem(at: item.devices.path(name), to: URL(fileURLWithPath: keep).appendingPathComponent("\(item.seed)-\(name).kdbx"))
                }
            }
        }
        if let keep = Self.environment["MYPASS_SCRIPT_KEEP"] {
            try problems.joined(separator: "\n").write(toFile: keep + "/problems.txt", atomically: true, encoding: .utf8)
        }
        let known = problems.filter { $0.contains(Self.knownMark) }, unknown = problems.filter { !$0.contains(Self.knownMark) }
        let knownSeeds = failingSeeds.filter { seed in known.contains { $0.hasPrefix("seed \(seed):") } }
        #expect(unknown.isEmpty, "failing seeds \(failingSeeds); replay with MYPASS_SCRIPT_SEED=<seed> MYPASS_SCRIPT_COUNT=1:\n\(unknown.prefix(8).joined(separator: "\n"))")
        // Shapes found and not yet fixed (described where they are found): reported as known issues, not hidden.
        withKnownIssue("three-device order decides a recycle bin shape, a value set twice, or without a base under history limit 0-1 a field one side never had (seeds \(knownSeeds))", isIntermittent: true) {
            #expect(known.isEmpty, "\(known.count) known problems in seeds \(knownSeeds):\n\(known.prefix(8).joined(separator: "\n"))")
        }
    }

    /// Marks a problem of a shape found and reported but not yet fixed in the merge.
    static let knownMark = "[known] "

    /// `remote` merged into `local` as `merge` does (`MergeCommit.merge`, with both files' formats and
    /// the base's), against `ancestor` handed over as certain (`--base`), or without one.
    func merge(_ ancestor: Side?, _ local: Side, _ remote: Side) throws -> Merged {
        let input = MergeCommit.Input(name: "remote", vault: remote.vault, sha256: nil, base: ancestor.map { .given($0.vault) } ?? .none,
                                      formats: MergeCommit.Formats(input: remote.format, base: ancestor?.format))
        let merged = try MergeCommit.merge([input], into: local.vault, format: local.format)
        return Merged(side: Side(vault: merged.vault, format: merged.format ?? local.format), changes: merged.steps.flatMap(\.changes),
                      warnings: merged.steps.flatMap(\.warnings))
    }

    /// The properties of one script's merges.
    func check(_ item: Case, base baseVault: Vault, clock: Timestamp) throws -> [String] {
        var problems: [String] = []
        let opened = try ["a", "b"].map { try item.devices.openFile($0) }
        let a = Side(vault: opened[0].vault, format: opened[0].settings), b = Side(vault: opened[1].vault, format: opened[1].settings)
        let c = Side(vault: try LibraryDevice.apply(item.scripts["c"]!, to: baseVault, from: clock.adding(1)),
                     format: item.scripts["c"]!.convert ?? ClientDevices.settings)
        let base = Side(vault: baseVault, format: ClientDevices.settings)
        for ancestor in [base, nil] as [Side?] {
            let label = ancestor == nil ? "no base" : "certain base"
            let forward = try merge(ancestor, a, b)
            let backward = try merge(ancestor, b, a)
            if !VaultDiff.sameContent(forward.vault, backward.vault) { problems.append("\(label): a<-b and b<-a differ") }
            if let difference = formatDifference(forward.side.format, backward.side.format) {
                problems.append("\(label): a<-b and b<-a are written differently (\(difference))")
            }
            for (name, input) in [("a", a), ("b", b)] {
                let again = try merge(ancestor, forward.side, input)
                if !again.changes.isEmpty || historySize(again.vault) != historySize(forward.vault) {
                    problems.append("\(label): merging the result with \(name) again changed \(again.changes.map { "\($0.kind) \($0.title) \($0.fields)" })")
                } else if !VaultDiff.sameContent(again.vault, forward.vault) {
                    problems.append("\(label): merging the result with \(name) again changed \(VaultDiff.diff(from: forward.vault, to: again.vault).map { "\($0.kind) \($0.title) \($0.fields)" }) without reporting it")
                }
                if let difference = formatDifference(again.side.format, forward.side.format) {
                    problems.append("\(label): merging the result with \(name) again changed the format (\(difference))")
                }
                problems += lostValues(again.vault, scripts: [item.scripts["a"]!, item.scripts["b"]!],
                                       except: ancestor == nil ? Set([a, b].flatMap { $0.vault.deletedObjects.map(\.uuid) }) : [], noBase: ancestor == nil)
                    .map { "\(label), merged again with \(name): \($0)" }
            }
            // A setting changed on one side only since the base is the result's (without a base the
            // newer SettingsChanged decides: MERGE.md rules 11 and 13); a weaker KDF is never written unreported.
            for (direction, merged, local, remote) in [("a<-b", forward, a, b), ("b<-a", backward, b, a)] {
                if let ancestor {
                    problems += droppedSettings(base: ancestor, local, remote, merged.side).map { "\(label), \(direction): \($0)" }
                }
                problems += unreportedWeakerKDF(merged, local, remote).map { "\(label), \(direction): \($0)" }
            }
            problems += structuralProblems(forward.vault, formerBins: formerBins([a.vault, b.vault])).map { "\(label): \($0)" }
            // Without a base, KeePass's time rule decides an entry one device deleted with a tombstone
            // (docs/merge-rules.md): the deletion may remove an edit it never saw, and which edits it meets
            // depends on the merge order. Such entries are checked with the base only.
            let timeRuled: Set<UUID> = ancestor == nil ? Set([a, b, c].flatMap { $0.vault.deletedObjects.map(\.uuid) }) : []
            problems += lostValues(forward.vault, scripts: [item.scripts["a"]!, item.scripts["b"]!], except: timeRuled, noBase: ancestor == nil).map { "\(label): \($0)" }
            // Three devices, every order of merging: nothing lost in any order. With the certain base
            // every order ends with the same content (unless a device lowered the history limit).
            // Without one, the order in which the versions meet may decide which of two conflicting
            // values is current (the other stays in history, docs/merge-rules.md): the devices then
            // exchange their results and converge on one version that loses nothing.
            let orders = [(a, b, c), (c, a, b), (b, c, a)]
            let sides = try orders.map { first, second, third in try merge(ancestor, try merge(ancestor, first, second).side, third).side }
            let results = sides.map(\.vault)
            let scripts = Array(item.scripts.values)
            for (index, result) in results.enumerated() {
                problems += lostValues(result, scripts: scripts, except: timeRuled, noBase: ancestor == nil).map { "\(label), three devices, order \(index): \($0)" }
            }
            // A merge that writes parts of both sides' formats stamps SettingsChanged a second after the
            // newer side's; each part keeps the time of the side it came from (`SettingTimes`), so a third
            // device's change made in between still wins in every order.
            if ancestor != nil, let difference = sides.dropFirst().compactMap({ formatDifference($0.format, sides[0].format) }).first {
                problems.append("\(label): three devices end with different formats (\(difference))")
            }
            // Where an entry one device deleted and others edited before and after the deletion ends
            // (its group or the recycle bin) depends on which edit meets the deletion first
            // (docs/merge-rules.md); its values are checked in every order above.
            let deletedSomewhere = ancestor == nil ? [] : Set(scripts.flatMap(\.deleted))
            let compared = results.map { $0.currentVersions.removingEntries(timeRuled.union(deletedSomewhere)).withoutEmptyRecycleBin }
            // A history limit of 0 or 1 keeps too little history to tell when a field changed: the
            // order may then decide a conflict (nothing is lost, checked above).
            let historyLimited = scripts.contains(where: \.limitsHistory)
            let ordersDiffer = compared.contains { !VaultDiff.sameContent($0, compared[0]) }
            // A difference about a recycle bin: its setting, a bin group (the base's, or one a device made
            // its bin with pykeepass) or an entry moved into or out of one.
            let madeBins = scripts.flatMap(\.pykeepass).filter { $0["op"] as? String == "newRecycleBin" }
            let binIDs = Set(madeBins.compactMap { ($0["uuid"] as? String).flatMap(UUID.init(uuidString:)) })
            let binPaths = ["/Recycle Bin"] + madeBins.compactMap { ($0["name"] as? String).map { "/" + $0 } }
            let isBinShaped = { (change: Change) -> Bool in
                (change.kind == .metaChanged && change.fields == ["RecycleBin"]) || change.uuid.map(binIDs.contains) == true
                    || binPaths.contains { change.path == $0 || change.path.hasPrefix($0 + "/") || change.detail.hasPrefix("from \($0)") }
            }
            if ancestor != nil, !historyLimited, ordersDiffer {
                // (Both directions: a Meta difference shows only towards the side with the newer time.)
                let differences = compared.dropFirst().map { VaultDiff.diff(from: compared[0], to: $0) + VaultDiff.diff(from: $0, to: compared[0]) }
                // Known, not yet fixed: the recycle bin the merge makes for an entry kept against a deletion
                // (MERGE.md rule 7) is stamped RecycleBinChanged at the deletion, which outranks another
                // device's earlier "bin off" in one order; in another order the bin is off when the deletion
                // meets the edit and no bin is made. Likewise two devices' bins (their RecycleBinChanged the
                // base's) and a third device's newer "bin off": which bin group the entries end in depends
                // on the order the bins fold in.
                // The same goes for groups a device made its bin (pykeepass), and the entries recycled into them.
                // Known, not yet fixed: two devices set one value at different times and a third set another
                // in between. The merge of the two keeps the value's earliest change time (a merged history
                // interleaves both lines), so the third device's value wins when the two met first; the
                // later setting wins otherwise. Nothing is lost (the other value stays in history).
                // Such a value is set into an entry's field: only that field of that entry may differ.
                let sharedFields = Set(scripts.flatMap(\.values).filter { $0.value.hasSuffix("-both") }.compactMap { value in
                    value.slot.map { "\(value.object) \($0)" }
                })
                let isSameValueTwice = { (change: Change) -> Bool in
                    guard change.kind == .updated, let uuid = change.uuid, !change.fields.isEmpty else { return false }
                    return change.fields.allSatisfy { sharedFields.contains("\(uuid) \($0)") }
                }
                // Each difference one of the two known shapes (a script can show both at once).
                let known = differences.joined().allSatisfy { isBinShaped($0) || isSameValueTwice($0) }
                problems.append("\(label): \(known ? Self.knownMark : "")three devices do not converge: \(differences.map { $0.map { "\($0.kind) \($0.subject) \($0.title) \($0.fields) \($0.path) \($0.detail)" } })")
            }
            // The devices converge: the merge of their results is a version each device, receiving it,
            // merges into itself without a change and without losing anything (also where the order of
            // merging decided a known shape above: exchanging the results settles it).
            if ancestor == nil || historyLimited || ordersDiffer {
                let final = try results.dropFirst().reduce(results[0]) { try VaultMerger.merge(base: ancestor?.vault, baseIsCertain: true, local: $0, remote: $1).vault }
                problems += lostValues(final, scripts: scripts, except: timeRuled, noBase: ancestor == nil).map { "\(label), results exchanged: \($0)" }
                for (index, result) in results.enumerated() {
                    let received = try VaultMerger.merge(base: ancestor?.vault, baseIsCertain: true, local: result, remote: final).vault
                    if !VaultDiff.sameContent(received.currentVersions.removingEntries(timeRuled), final.currentVersions.removingEntries(timeRuled)) {
                        // Known, not yet fixed: where the order decided a bin shape, exchanging the results may
                        // move a recycled entry between two bins once more (nothing is lost: checked above).
                        // Known too: without a base, under a history limit of 0 or 1 a merged result may keep
                        // no version the other results hold (the merge trimmed the one both shared); with no
                        // ancestor a field one side set and the other never had goes to the side whose value
                        // is newer in its own line, which the order of merging decides (kept in history).
                        let difference = VaultDiff.diff(from: final, to: received)
                        let noSharedVersion = ancestor == nil && historyLimited
                        let known = noSharedVersion || (ordersDiffer && ancestor != nil && !historyLimited && difference.allSatisfy(isBinShaped))
                        problems.append("\(label): \(known ? Self.knownMark : "")device \(index) does not converge on the merge of the results: \(difference.map { "\($0.kind) \($0.title) \($0.fields) \($0.path) \($0.detail)" })")
                    }
                }
            }
        }
        return problems
    }

    /// How two formats differ in cipher, KDF (salt aside) or compression; nil when they do not.
    func formatDifference(_ x: FormatSettings, _ y: FormatSettings) -> String? {
        var parts: [String] = []
        if x.cipher != y.cipher { parts.append("cipher \(x.cipher.rawValue) / \(y.cipher.rawValue)") }
        if KDFChoice(x.kdf) != KDFChoice(y.kdf) { parts.append("KDF \(KDFChoice(x.kdf).text) / \(KDFChoice(y.kdf).text)") }
        if x.compression != y.compression { parts.append("compression \(x.compression.name) / \(y.compression.name)") }
        return parts.isEmpty ? nil : parts.joined(separator: ", ")
    }

    /// Every vault setting and format part a device can change, as text.
    static var settings: [(name: String, value: (Side) -> String)] {
        var list: [(String, (Side) -> String)] = [
            ("DatabaseName", { $0.vault.meta.databaseName }), ("DatabaseDescription", { $0.vault.meta.databaseDescription }),
            ("DefaultUserName", { $0.vault.meta.defaultUserName }), ("Color", { $0.vault.meta.color }),
            ("MaintenanceHistoryDays", { "\($0.vault.meta.maintenanceHistoryDays)" }), ("HistoryMaxItems", { "\($0.vault.meta.historyMaxItems)" }),
            ("HistoryMaxSize", { "\($0.vault.meta.historyMaxSize)" }),
            // One setting: on or off with the group it names (MERGE.md rules 9 and 11).
            ("RecycleBin", { "\($0.vault.meta.recycleBinEnabled ? "on" : "off"), \($0.vault.meta.recycleBinUUID?.uuidString ?? "no group")" }),
            ("Cipher", { $0.format.cipher.rawValue }), ("KDF", { KDFChoice($0.format.kdf).text }), ("Compression", { $0.format.compression.name }),
        ]
        for flag in EditScript.memoryProtectionFlags {
            list.append((flag, { side in
                let protection = side.vault.meta.memoryProtection
                switch flag {
                case "ProtectTitle": return "\(protection.protectTitle)"
                case "ProtectUserName": return "\(protection.protectUserName)"
                case "ProtectPassword": return "\(protection.protectPassword)"
                case "ProtectURL": return "\(protection.protectURL)"
                default: return "\(protection.protectNotes)"
                }
            }))
        }
        return list
    }

    /// Settings (and Meta custom data, custom icons) one side changed since `base` and the other did
    /// not, that `result` does not hold with that side's value.
    func droppedSettings(base: Side, _ local: Side, _ remote: Side, _ result: Side) -> [String] {
        var dropped: [String] = []
        for (side, other, name) in [(local, remote, "local"), (remote, local, "remote")] {
            for setting in Self.settings {
                let value = setting.value(side)
                if value != setting.value(base), setting.value(other) == setting.value(base), setting.value(result) != value {
                    dropped.append("\(setting.name) changed on the \(name) side only was dropped (\(setting.value(base)) -> \(value), result \(setting.value(result)))")
                }
            }
            let baseData = base.vault.meta.customData, otherData = other.vault.meta.customData
            for item in side.vault.meta.customData where !baseData.contains(item) && !otherData.contains(where: { $0.key == item.key })
                && !result.vault.meta.customData.contains(item) {
                dropped.append("Meta custom data '\(item.key)' added on the \(name) side only was dropped")
            }
            for icon in side.vault.meta.customIcons where !result.vault.meta.customIcons.contains(where: { $0.uuid == icon.uuid }) {
                dropped.append("custom icon \(icon.uuid) of the \(name) side was dropped")
            }
        }
        return dropped
    }

    /// A result whose KDF is weaker than either side's without the merge saying so (a change or a
    /// warning naming the KDF: MERGE.md rule 13).
    func unreportedWeakerKDF(_ merged: Merged, _ local: Side, _ remote: Side) -> [String] {
        let written = KDFChoice(merged.side.format.kdf)
        let reported = (merged.changes.compactMap(\.detail) + merged.warnings).contains { $0.contains("KDF") || $0.contains("key derivation") }
        return [("local", local), ("remote", remote)].compactMap { name, side in
            written.isWeaker(than: KDFChoice(side.format.kdf)) && !reported
                ? "written with \(written.text), weaker than the \(name) side's \(KDFChoice(side.format.kdf).text), unreported" : nil
        }
    }

    private func historySize(_ vault: Vault) -> Int {
        vault.root.allEntries().reduce(0) { $0 + $1.entry.history.count }
    }

    /// Duplicate UUIDs, live objects listed as deleted, more than one recycle bin.
    /// Groups named "Recycle Bin" that an input keeps as an ordinary group (a device that made another
    /// group its bin, as pykeepass does): a merge keeping them made no second bin.
    func formerBins(_ inputs: [Vault]) -> Set<UUID> {
        var found = Set<UUID>()
        for input in inputs {
            input.root.forEachGroup { group, _ in
                if group.name == "Recycle Bin" && group.uuid != input.meta.recycleBinUUID { found.insert(group.uuid) }
            }
        }
        return found
    }

    func structuralProblems(_ vault: Vault, formerBins: Set<UUID>) -> [String] {
        var problems: [String] = []
        var seen = Set<UUID>(), bins = 0
        vault.root.forEachGroup { group, _ in
            if !seen.insert(group.uuid).inserted { problems.append("group \(group.uuid) twice") }
            if group.name == "Recycle Bin" && !formerBins.contains(group.uuid) { bins += 1 }
            for entry in group.entries where !seen.insert(entry.uuid).inserted { problems.append("entry \(entry.uuid) twice") }
        }
        if bins > 1 { problems.append("\(bins) recycle bins") }
        for deleted in vault.deletedObjects where seen.contains(deleted.uuid) { problems.append("live \(deleted.uuid) listed as deleted") }
        return problems
    }

    /// Values set by a device that are nowhere in `vault`, unless that device deleted their object
    /// itself (its deletion saw them) or lowered the history limit. A value that lives only in
    /// history — replaced by its own device, or set into a field another device set too (it may have
    /// lost the conflict) — may be trimmed when any device lowered the vault's history limit, or
    /// when its entry's history is at the limit.
    func lostValues(_ vault: Vault, scripts: [EditScript], except timeRuled: Set<UUID>, noBase: Bool = false) -> [String] {
        let texts = vault.textsByObject()
        let historyLimited = scripts.contains(where: \.limitsHistory)
        var slotsSet: [String: Int] = [:]
        for script in scripts {
            for slot in Set(script.values.compactMap { value in value.slot.map { "\(value.object) \($0)" } }) { slotsSet[slot, default: 0] += 1 }
        }
        // Entries whose history is at the vault's limit: the limit trims their oldest versions.
        let limit = vault.meta.historyMaxItems
        let fullHistories = Set(vault.root.allEntries().map(\.entry).filter { limit >= 0 && $0.history.count >= limit }.map(\.uuid))
        var lost: [String] = []
        for script in scripts where !script.limitsHistory {
            for set in script.values where !script.deleted.contains(set.object) && !timeRuled.contains(set.object)
                && texts[set.object]?.contains(set.value) != true {
                let contested = set.slot.map { slotsSet["\(set.object) \($0)", default: 0] > 1 } ?? false
                // A setting keeps no history: one replaced by its own device or set by another too may be gone.
                if set.setting && (set.replaced || contested) { continue }
                if (historyLimited || fullHistories.contains(set.object)) && (set.replaced || contested) { continue }
                // Without a base, an entry a device edited after lowering the history limit to 0 or 1 shares
                // no history with the other sides: KeePass's rule makes the newer version current and the
                // other a history item, which that limit trims in a later merge (MERGE.md rules 2 and 10).
                if historyLimited && noBase && !set.setting { continue }
                lost.append("a value of \(set.object) was lost")
            }
        }
        return lost
    }
}

/// A list the concurrent keepassxc-cli runs add their failures to (behind a lock).
final class FailureList: Sendable {
    private let items = Mutex<[String]>([])
    func add(_ item: String) { items.withLock { $0.append(item) } }
    var all: [String] { items.withLock { $0 } }
}

extension Vault {
    /// This vault with every entry's history left out: what three devices merged in different orders
    /// must agree on (each order's history also holds the merge results made on the way, which exist
    /// in that order only; the values of every device are checked in history separately).
    var currentVersions: Vault {
        func strip(_ group: Group) -> Group {
            var group = group
            group.entries = group.entries.map(\.withoutHistory)
            group.groups = group.groups.map(strip)
            return group
        }
        var vault = self
        vault.root = strip(root)
        return vault
    }

    /// This vault without its recycle bin when the bin holds nothing (nor its Meta reference).
    var withoutEmptyRecycleBin: Vault {
        guard let bin = meta.recycleBinUUID, let group = root.group(bin), group.entries.isEmpty, group.groups.isEmpty else { return self }
        var vault = self
        vault.root.groups.removeAll { $0.uuid == bin }
        vault.deletedObjects.removeAll { $0.uuid == bin }
        vault.meta.recycleBinUUID = nil
        vault.meta.recycleBinChanged = nil
        return vault
    }

    /// This vault without the entries `uuids` (wherever they are) and their tombstones.
    func removingEntries(_ uuids: Set<UUID>) -> Vault {
        guard !uuids.isEmpty else { return self }
        func strip(_ group: Group) -> Group {
            var group = group
            group.entries.removeAll { uuids.contains($0.uuid) }
            group.groups = group.groups.map(strip)
            return group
        }
        var vault = self
        vault.root = strip(root)
        vault.deletedObjects.removeAll { uuids.contains($0.uuid) }
        return vault
    }
}

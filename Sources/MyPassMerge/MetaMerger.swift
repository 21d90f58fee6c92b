internal import Foundation
internal import MyPassCore

/// Merges the vault settings (MERGE.md rule 11): each field three-way, conflicts decided by its own
/// `*Changed` time (SettingsChanged for the settings without one); custom data per key; custom
/// icons by UUID, none lost.
struct MetaMerger {
    let ancestor: Meta?
    let local: Meta
    let remote: Meta

    /// The merged settings, the names of those taken from the remote, and how each differing one was decided.
    func merge() -> (meta: Meta, changed: [String], decisions: [PropertyDecision]) {
        var merged = local
        var changed: [String] = []
        var decisions: [PropertyDecision] = []

        /// Field `name` whose edits are timed by `time` (nil when the file lacks that time); `order` ranks
        /// the two sides' values when the times are equal (else the values themselves).
        /// `time`: when a side changed the field, deciding a conflict with the base; `wholeTime`, when
        /// given, decides it without one (the side whose settings changed later).
        /// `setBack`: a value equal to the ancestor's with a newer time of its own counts as set back
        /// (a single value with its own time; not the recycle bin, whose one time covers two values).
        func resolve<T: Equatable>(_ name: String, _ value: (Meta) -> T, time: (Meta) -> Timestamp?, wholeTime: ((Meta) -> Timestamp?)? = nil,
                                   order: ((Meta) -> String)? = nil, setBack: Bool = true, _ apply: (inout Meta) -> Void) {
            let l = value(local), r = value(remote)
            guard l != r else { return }
            let ranks = order.map { ($0(local) + String(describing: l), $0(remote) + String(describing: r)) }
            let lTime = time(local), rTime = time(remote)
            let takeRemote: Bool
            let rule: FieldDecision.Rule
            if let ancestor {
                let b = value(ancestor), bTime = time(ancestor)
                // A field with a time of its own set back to the ancestor's value after it held another
                // was changed (back) when its time is newer than the ancestor's (MERGE.md rule 14).
                func changed(_ value: T, _ time: Timestamp?) -> Bool {
                    if value != b { return true }
                    guard setBack, wholeTime == nil, let time, let bTime else { return false }
                    return time > bTime
                }
                let localChanged = changed(l, lTime), remoteChanged = changed(r, rTime)
                if localChanged && remoteChanged {
                    takeRemote = ranks.map { Self.remoteWins($0.0, lTime, $0.1, rTime) } ?? Self.remoteWins(l, lTime, r, rTime)
                    rule = .conflictNewerWins
                } else {
                    takeRemote = remoteChanged
                    rule = remoteChanged ? .onlyRemoteChanged : .onlyLocalChanged
                }
            } else {
                let lWhole = wholeTime.map { $0(local) } ?? lTime, rWhole = wholeTime.map { $0(remote) } ?? rTime
                takeRemote = ranks.map { Self.remoteWins($0.0, lWhole, $0.1, rWhole) } ?? Self.remoteWins(l, lWhole, r, rWhole)
                rule = .noAncestorNewerWins
            }
            let shown: (T) -> FieldState = { .value(String(describing: $0)) }
            decisions.append(PropertyDecision(field: name, base: ancestor.map { shown(value($0)) }, local: shown(l), remote: shown(r),
                                              result: takeRemote ? .remote : .local, rule: rule))
            if takeRemote {
                apply(&merged)
                changed.append(name)
            }
        }

        resolve("DatabaseName", { $0.databaseName }, time: { $0.databaseNameChanged }) {
            $0.databaseName = remote.databaseName
            $0.databaseNameChanged = remote.databaseNameChanged
        }
        resolve("DatabaseDescription", { $0.databaseDescription }, time: { $0.databaseDescriptionChanged }) {
            $0.databaseDescription = remote.databaseDescription
            $0.databaseDescriptionChanged = remote.databaseDescriptionChanged
        }
        resolve("DefaultUserName", { $0.defaultUserName }, time: { $0.defaultUserNameChanged }) {
            $0.defaultUserName = remote.defaultUserName
            $0.defaultUserNameChanged = remote.defaultUserNameChanged
        }
        // The same time on both sides (pykeepass creates a bin without RecycleBinChanged): a bin over none.
        resolve("RecycleBin", { "\($0.recycleBinEnabled ? "enabled" : "disabled"), group \($0.recycleBinUUID?.canonicalString ?? "none")" },
                time: { $0.recycleBinChanged }, order: { "\($0.recycleBinUUID == nil ? 0 : 1)\($0.recycleBinEnabled ? 1 : 0)" }, setBack: false) {
            $0.recycleBinEnabled = remote.recycleBinEnabled
            $0.recycleBinUUID = remote.recycleBinUUID
            $0.recycleBinChanged = remote.recycleBinChanged
        }
        resolve("EntryTemplatesGroup", { $0.entryTemplatesGroup }, time: { $0.entryTemplatesGroupChanged }) {
            $0.entryTemplatesGroup = remote.entryTemplatesGroup
            $0.entryTemplatesGroupChanged = remote.entryTemplatesGroupChanged
        }
        // The settings without a time of their own: each by when it last changed (`SettingTimes`: the
        // time recorded for its value by an earlier merge, else SettingsChanged).
        let settings: (Meta) -> Timestamp? = { $0.settingsChanged }
        func settingTime(_ name: String) -> (Meta) -> Timestamp? {
            let setting = SettingTimes.metaSettings.first { $0.name == name }!
            return { SettingTimes.time(of: name, value: setting.value($0), in: $0) }
        }
        resolve("MaintenanceHistoryDays", { $0.maintenanceHistoryDays }, time: settingTime("MaintenanceHistoryDays"), wholeTime: settings) {
            $0.maintenanceHistoryDays = remote.maintenanceHistoryDays
        }
        resolve("Color", { $0.color }, time: settingTime("Color"), wholeTime: settings) { $0.color = remote.color }
        // Each memory-protection flag is a setting of its own (MERGE.md rule 11): one side protecting
        // user names and the other unprotecting URLs keeps both choices.
        for flag in MemoryProtectionFlag.allCases {
            resolve(flag.elementName, { flag.isOn(in: $0.memoryProtection) }, time: settingTime(flag.elementName), wholeTime: settings) {
                flag.set(flag.isOn(in: remote.memoryProtection), in: &$0.memoryProtection)
            }
        }
        resolve("HistoryMaxItems", { $0.historyMaxItems }, time: settingTime("HistoryMaxItems"), wholeTime: settings) { $0.historyMaxItems = remote.historyMaxItems }
        resolve("HistoryMaxSize", { $0.historyMaxSize }, time: settingTime("HistoryMaxSize"), wholeTime: settings) { $0.historyMaxSize = remote.historyMaxSize }
        resolve("MasterKeyChangeRec", { $0.masterKeyChangeRecommended }, time: settingTime("MasterKeyChangeRec"), wholeTime: settings) {
            $0.masterKeyChangeRecommended = remote.masterKeyChangeRecommended
        }
        resolve("MasterKeyChangeForce", { $0.masterKeyChangeForced }, time: settingTime("MasterKeyChangeForce"), wholeTime: settings) {
            $0.masterKeyChangeForced = remote.masterKeyChangeForced
        }
        merged.settingsChanged = [local.settingsChanged, remote.settingsChanged].compactMap { $0 }.max()
        // Each of those settings keeps the time of the side it came from (not the later SettingsChanged).
        var times: [String: (value: String, time: Timestamp?)] = [:]
        for setting in SettingTimes.metaSettings {
            let l = setting.value(local), r = setting.value(remote), result = setting.value(merged)
            times[setting.name] = (result, SettingTimes.merged(setting.name, result: result, local: (l, settingTime(setting.name)(local)),
                                                               remote: (r, settingTime(setting.name)(remote))))
        }

        // Custom data per key; a 4.1 item time decides conflicts.
        // The record of setting times is no content: rebuilt below, never merged as an item.
        var items = local.customData.filter { $0.key != SettingTimes.key }
        for item in remote.customData where item.key != SettingTimes.key {
            if let index = items.firstIndex(where: { $0.key == item.key }) {
                let mine = items[index]
                guard mine != item else { continue }
                let base = ancestor?.customData.first { $0.key == item.key }
                let remoteEdited = base != item, localEdited = base != mine
                let remoteNewer = Self.remoteWins(mine.value, mine.lastModified, item.value, item.lastModified)
                if item.isBookkeeping {
                    // KeePassXC's bookkeeping item: the same on every device, never a change (MERGE.md rule 4).
                    if remoteNewer { items[index] = item }
                    continue
                }
                if (remoteEdited && !localEdited) || (remoteEdited && localEdited && remoteNewer) {
                    items[index] = item
                    changed.append("CustomData '\(item.key)'")
                }
            } else if ancestor?.customData.contains(item) != true {
                // New on the remote (not an item the local side deleted): added.
                items.append(item)
                changed.append("CustomData '\(item.key)'")
            }
        }
        // Items the remote deleted and the local did not touch since the ancestor: removed.
        items.removeAll { item in
            let deletedRemotely = !remote.customData.contains { $0.key == item.key } && ancestor?.customData.contains(item) == true
            if deletedRemotely { changed.append("CustomData '\(item.key)'") }
            return deletedRemotely
        }
        let baseKeys = Dictionary((ancestor?.customData ?? []).enumerated().map { ($1.key, $0) }, uniquingKeysWith: { first, _ in first })
        merged.customData = items.sorted { lhs, rhs in
            let l = baseKeys[lhs.key] ?? Int.max, r = baseKeys[rhs.key] ?? Int.max
            return l != r ? l < r : lhs.key < rhs.key
        }
        // Local's record (its format parts' times, which the format merge rewrites), with these settings' times.
        merged.customData += local.customData.filter { $0.key == SettingTimes.key }
        SettingTimes.write(times, into: &merged)

        // Custom icons by UUID: union; the same UUID with other data takes the newer one.
        var icons = local.customIcons
        for icon in remote.customIcons {
            if let index = icons.firstIndex(where: { $0.uuid == icon.uuid }) {
                if icons[index] != icon,
                   Self.remoteWins(icons[index].data.base64EncodedString() + (icons[index].name ?? ""), icons[index].lastModified,
                                   icon.data.base64EncodedString() + (icon.name ?? ""), icon.lastModified) {
                    icons[index] = icon
                    changed.append("CustomIcon \(icon.uuid.canonicalString)")
                }
            } else {
                icons.append(icon)
                changed.append("CustomIcon \(icon.uuid.canonicalString)")
            }
        }
        // A fixed order: the base's icons in its order, then the others by UUID (icons are referred to
        // by UUID, so the order carries no meaning; a fixed one keeps both devices identical).
        let baseOrder = Dictionary((ancestor?.customIcons ?? []).enumerated().map { ($1.uuid, $0) }, uniquingKeysWith: { first, _ in first })
        merged.customIcons = icons.sorted { lhs, rhs in
            let l = baseOrder[lhs.uuid] ?? Int.max, r = baseOrder[rhs.uuid] ?? Int.max
            return l != r ? l < r : UUID.precedes(lhs.uuid, rhs.uuid)
        }
        for element in remote.preserved where !merged.preserved.contains(where: { $0.name == element.name }) {
            merged.preserved.append(element)
            changed.append("Unknown data")
        }
        return (merged, changed, decisions)
    }

    /// Whether the remote value of a setting both sides changed wins: the later change time; the same
    /// time (or none): the larger value by its bytes, the same from both directions.
    static func remoteWins<T>(_ local: T, _ localTime: Timestamp?, _ remote: T, _ remoteTime: Timestamp?) -> Bool {
        let never = Timestamp(secondsSinceYearOne: 0)
        let l = localTime ?? never, r = remoteTime ?? never
        guard l == r else { return r > l }
        return String(describing: local).utf8.lexicographicallyPrecedes(String(describing: remote).utf8)
    }
}

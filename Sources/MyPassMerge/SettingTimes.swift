internal import Foundation
public import MyPassCore

/// When each setting timed by the vault's one `SettingsChanged` (the maintenance days, colour,
/// history limits, memory-protection flags, master-key reminders, and the cipher, KDF and
/// compression) last changed, where that is earlier than `SettingsChanged`. A merge combines
/// settings changed at different times under one `SettingsChanged` (the later of its sides', or a
/// second after it); without these times a setting taken from the older side would outrank a third
/// device's change made between the two. Kept in the vault's custom data under `key` as
/// `Name:digest:seconds` words, the digest that of the value the time belongs to: a setting whose
/// value another client changed since (the digest no longer matches) is timed by `SettingsChanged`
/// again. Not content: merges rebuild it and never report it.
public enum SettingTimes {
    /// The custom-data key of the record.
    public static let key = "MyPassSync.SettingTimes"

    /// The Meta settings timed by `SettingsChanged`, each with its value as text.
    static let metaSettings: [(name: String, value: @Sendable (Meta) -> String)] = {
        var list: [(String, @Sendable (Meta) -> String)] = [
            ("MaintenanceHistoryDays", { String(describing: $0.maintenanceHistoryDays) }),
            ("Color", { String(describing: $0.color) }),
            ("HistoryMaxItems", { String(describing: $0.historyMaxItems) }),
            ("HistoryMaxSize", { String(describing: $0.historyMaxSize) }),
            ("MasterKeyChangeRec", { String(describing: $0.masterKeyChangeRecommended) }),
            ("MasterKeyChangeForce", { String(describing: $0.masterKeyChangeForced) }),
        ]
        for flag in MemoryProtectionFlag.allCases {
            list.append((flag.elementName, { String(describing: flag.isOn(in: $0.memoryProtection)) }))
        }
        return list
    }()

    /// The recorded times of `meta`: name to (digest, time).
    static func recorded(_ meta: Meta) -> [String: (digest: String, time: Timestamp)] {
        guard let item = meta.customData.first(where: { $0.key == key }) else { return [:] }
        var times: [String: (digest: String, time: Timestamp)] = [:]
        for word in item.value.split(separator: " ") {
            let parts = word.split(separator: ":")
            guard parts.count == 3, let seconds = Int64(parts[2]) else { continue }
            times[String(parts[0])] = (String(parts[1]), Timestamp(secondsSinceYearOne: seconds))
        }
        return times
    }

    /// When setting `name`, whose value in `meta` is `value`, last changed: its recorded time while
    /// the value is the one recorded (never later than `SettingsChanged`), else `SettingsChanged`.
    public static func time(of name: String, value: String, in meta: Meta) -> Timestamp? {
        guard let entry = recorded(meta)[name], entry.digest == digest(value) else { return meta.settingsChanged }
        guard let changed = meta.settingsChanged else { return entry.time }
        return min(entry.time, changed)
    }

    /// The time of setting `name` in a merge of two sides: the winning side's time, or, when both
    /// hold the same value, the later of the two.
    public static func merged(_ name: String, result: String, local: (value: String, time: Timestamp?),
                              remote: (value: String, time: Timestamp?)) -> Timestamp? {
        let times = [local, remote].filter { $0.value == result }.compactMap(\.time)
        return times.max()
    }

    /// Writes `times` (name to value and time) into `meta`'s record: the settings whose time is
    /// earlier than `meta.settingsChanged`; the record is dropped when there are none.
    public static func write(_ times: [String: (value: String, time: Timestamp?)], into meta: inout Meta) {
        var entries = recorded(meta)
        for (name, entry) in times {
            if let time = entry.time, let changed = meta.settingsChanged, time < changed {
                entries[name] = (digest(entry.value), time)
            } else {
                entries[name] = nil
            }
        }
        meta.customData.removeAll { $0.key == key }
        guard !entries.isEmpty else { return }
        let text = entries.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value.digest):\($0.value.time.secondsSinceYearOne)" }
        meta.customData.append(CustomDataItem(key: key, value: text.joined(separator: " ")))
    }

    /// The Meta settings' times in `meta` as they are before its `SettingsChanged` moves (each
    /// recorded one, else the current `SettingsChanged`), to write back after it moved.
    public static func metaTimes(_ meta: Meta) -> [String: (value: String, time: Timestamp?)] {
        Dictionary(uniqueKeysWithValues: metaSettings.map { setting in
            let value = setting.value(meta)
            return (setting.name, (value, time(of: setting.name, value: value, in: meta)))
        })
    }

    /// A short stable digest of `text` (FNV-1a, 64 bits, hexadecimal).
    static func digest(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return String(hash, radix: 16)
    }
}

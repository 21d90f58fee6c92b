internal import MyPassCore

/// When one side changed one property of an entry (MERGE.md rule 5): the time of the oldest version
/// in that side's line (current and history) newer than the ancestor that holds the property's
/// current value. An entry touched later for another field did not change this one later, and a
/// merged version's history (both sides' versions, interleaved in time) does not hide when the value
/// was set: the time is the same whichever merges the version went through.
enum FieldChangeTime {
    static func of<T: Equatable>(_ entry: Entry, _ value: (Entry) -> T, after ancestorTime: Timestamp?) -> Timestamp {
        let current = value(entry)
        var time = entry.times.lastModified
        for item in entry.history where item.times.lastModified < time && value(item) == current {
            if let ancestorTime, item.times.lastModified <= ancestorTime { continue }
            time = item.times.lastModified
        }
        return time
    }
}

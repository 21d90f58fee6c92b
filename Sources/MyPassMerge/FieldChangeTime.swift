internal import MyPassCore

/// When one side changed one property of an entry (MERGE.md rule 5): the time of the oldest version
/// in that side's line (current and history) from which on the property has held its current value.
/// An entry touched later for another field did not change this one later.
enum FieldChangeTime {
    static func of<T: Equatable>(_ entry: Entry, _ value: (Entry) -> T) -> Timestamp {
        let current = value(entry)
        var time = entry.times.lastModified
        for item in entry.history.sorted(by: { $0.times.lastModified > $1.times.lastModified }) where item.times.lastModified <= time {
            guard value(item) == current else { break }
            time = item.times.lastModified
        }
        return time
    }
}

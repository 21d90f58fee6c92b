public import Foundation

/// A KeePass time: whole seconds since 0001-01-01T00:00:00Z (the unit KDBX 4 stores), UTC.
///
/// Kept as an integer rather than `Date` so that times survive open -> save bit-exactly and compare
/// without floating-point surprises.
public struct Timestamp: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Seconds since 0001-01-01T00:00:00Z.
    public var secondsSinceYearOne: Int64

    /// Seconds between 0001-01-01 and 1970-01-01.
    public static let unixEpochOffset: Int64 = 62_135_596_800

    /// The moment `secondsSinceYearOne` seconds after 0001-01-01T00:00:00Z (KDBX 4's encoding).
    public init(secondsSinceYearOne: Int64) {
        self.secondsSinceYearOne = secondsSinceYearOne
    }

    /// The time `unixSeconds` after 1970-01-01T00:00:00Z.
    public init(unixSeconds: Int64) {
        secondsSinceYearOne = unixSeconds + Self.unixEpochOffset
    }

    /// `date` rounded down to a whole second.
    public init(_ date: Date) {
        self.init(unixSeconds: Int64(date.timeIntervalSince1970.rounded(.down)))
    }

    /// The current time, to the second.
    public static func now() -> Timestamp { Timestamp(Date()) }

    /// Seconds since the Unix epoch.
    public var unixSeconds: Int64 { secondsSinceYearOne - Self.unixEpochOffset }

    /// The time as a `Date`.
    public var date: Date { Date(timeIntervalSince1970: TimeInterval(unixSeconds)) }

    /// ISO 8601 in UTC with a `Z`, as KDBX 3.1 stores times (`2026-01-01T00:00:00Z`).
    public var iso8601: String {
        let (year, month, day, hour, minute, second) = civil
        return String(unsafeUninitializedCapacity: 20) { output in
            func put(_ value: Int, digits: Int, at offset: Int) {
                var remaining = value
                for position in stride(from: offset + digits - 1, through: offset, by: -1) {
                    output[position] = UInt8(48 + remaining % 10)
                    remaining /= 10
                }
            }
            put(year, digits: 4, at: 0)
            output[4] = UInt8(ascii: "-")
            put(month, digits: 2, at: 5)
            output[7] = UInt8(ascii: "-")
            put(day, digits: 2, at: 8)
            output[10] = UInt8(ascii: "T")
            put(hour, digits: 2, at: 11)
            output[13] = UInt8(ascii: ":")
            put(minute, digits: 2, at: 14)
            output[16] = UInt8(ascii: ":")
            put(second, digits: 2, at: 17)
            output[19] = UInt8(ascii: "Z")
            return 20
        }
    }

    /// The moment in ISO 8601.
    public var description: String { iso8601 }

    /// Parses ISO 8601 as KeePass writes it (`YYYY-MM-DDTHH:MM:SSZ`, fractional seconds and numeric
    /// offsets accepted).
    public init?(iso8601 text: String) {
        let bytes = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int64? {
            guard range.upperBound <= bytes.count else { return nil }
            var value: Int64 = 0
            for byte in bytes[range] {
                guard byte >= 48 && byte <= 57 else { return nil }
                value = value * 10 + Int64(byte - 48)
            }
            return value
        }
        guard bytes.count >= 19, bytes[4] == 45, bytes[7] == 45, bytes[10] == 84 || bytes[10] == 32,
              bytes[13] == 58, bytes[16] == 58,
              let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var index = 19
        if index < bytes.count, bytes[index] == 46 {  // fractional seconds: ignored
            index += 1
            while index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 { index += 1 }
        }
        var offsetSeconds: Int64 = 0
        if index < bytes.count {
            switch bytes[index] {
            case 90: index += 1  // Z
            case 43, 45:  // +hh:mm / -hh:mm
                guard let hours = number((index + 1)..<(index + 3)), let minutes = number((index + 4)..<(index + 6)) else {
                    return nil
                }
                offsetSeconds = (hours * 3600 + minutes * 60) * (bytes[index] == 43 ? 1 : -1)
                index += 6
            default: return nil
            }
        }
        guard index == bytes.count else { return nil }
        let days = Self.daysSinceYearOne(year: year, month: month, day: day)
        secondsSinceYearOne = days * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds
    }

    /// Earlier first.
    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
        lhs.secondsSinceYearOne < rhs.secondsSinceYearOne
    }

    /// Days from 0001-01-01 to the given proleptic Gregorian date.
    static func daysSinceYearOne(year: Int64, month: Int64, day: Int64) -> Int64 {
        // Days-from-civil on a March-based year, shifted from the 1970 epoch to year one.
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let daysSince1970 = era * 146_097 + dayOfEra - 719_468
        return daysSince1970 + unixEpochOffset / 86_400
    }

    private var civil: (Int, Int, Int, Int, Int, Int) {
        let days = secondsSinceYearOne >= 0 ? secondsSinceYearOne / 86_400 : (secondsSinceYearOne - 86_399) / 86_400
        let secondOfDay = secondsSinceYearOne - days * 86_400
        let z = days - unixEpochOffsetDays + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthPrime = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthPrime + 2) / 5 + 1
        let month = monthPrime < 10 ? monthPrime + 3 : monthPrime - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (Int(year), Int(month), Int(day), Int(secondOfDay / 3600), Int(secondOfDay % 3600 / 60), Int(secondOfDay % 60))
    }

    private var unixEpochOffsetDays: Int64 { Self.unixEpochOffset / 86_400 }
}

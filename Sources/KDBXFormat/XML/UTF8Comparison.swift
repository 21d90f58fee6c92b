internal import Foundation

extension String {
    /// Whether this string's UTF-8 is exactly `bytes` (lengths first, then one memory compare):
    /// the reader's test for a value repeated from the version before.
    func hasUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard utf8.count == bytes.count else { return false }
        var text = self
        return text.withUTF8 { mine in
            mine.count == 0 || memcmp(mine.baseAddress!, bytes.baseAddress!, mine.count) == 0
        }
    }
}

/// UTF-8 checks of a protected value's plain bytes that make no `String` (whose heap copy of the
/// secret would be freed without being wiped).
enum PlainUTF8 {
    /// Whether `bytes` are valid UTF-8.
    static func isValid(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        if bytes.allSatisfy({ $0 < 0x80 }) { return true }
        return !transcode(bytes.makeIterator(), from: UTF8.self, to: UTF8.self, stoppingOnError: true) { _ in }
    }

    /// `bytes` with each ill-formed sequence replaced by U+FFFD, as `String(decoding:as:)` does,
    /// in an array sized for the worst case up front (a reallocation would leave a plain copy behind).
    static func repaired(_ bytes: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count * 3)
        _ = transcode(bytes.makeIterator(), from: UTF8.self, to: UTF8.self, stoppingOnError: false) { output.append($0) }
        return output
    }
}

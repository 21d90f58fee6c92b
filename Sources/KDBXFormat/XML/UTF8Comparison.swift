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

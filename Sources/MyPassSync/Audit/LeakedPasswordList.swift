internal import Foundation
internal import SyncFiles
internal import SyncState
internal import SyncCommit
internal import SyncWatch
internal import SyncRemote
internal import MyPassCrypto
#if canImport(Glibc)
internal import Glibc
#endif

/// An offline list of leaked-password hashes as Have I Been Pwned publishes it ("ordered by hash"):
/// one `SHA1HEX:COUNT` line per password, sorted by hash. Looked up by binary search over the file
/// with positioned reads: a 40 GB list costs a few dozen small reads per password, never its size
/// in memory.
public final class LeakedPasswordList {
    /// Why a list cannot be used.
    public enum Failure: Error, CustomStringConvertible {
        case notAList(path: String, detail: String)
        case notSorted(path: String)

        public var description: String {
            switch self {
            case .notAList(let path, let detail): "\(path): not a HIBP SHA-1 list (\(detail))"
            case .notSorted(let path): "\(path): not sorted by hash (download the list \"ordered by hash\")"
            }
        }
    }

    private let path: String
    private let file: FileDescriptor
    private let size: Int
    /// Longest line accepted: 40 hex digits, a colon, a count, a line end.
    private static let longestLine = 128
    /// Below this many bytes the remaining range is read at once and scanned.
    private static let scanSize = 16 << 10

    /// Opens the list at `path` (a regular file).
    public init(path: String) throws {
        self.path = path
        guard let file = SystemCalls.openForReading(path, on: .real) else { throw FileReading.error(errno, .open, path) }
        var status = stat()
        guard fstat(file.raw, &status) == 0 else { throw FileReading.error(errno, .stat, path) }
        guard status.st_mode & S_IFMT == S_IFREG else { throw FileError.notARegularFile(path: path) }
        size = Int(status.st_size)
        self.file = file
    }

    /// How often `password` appears in the list (0: not in it).
    public func timesLeaked(_ password: String) throws -> Int {
        try timesLeaked(hash: Self.hexDigits(SHA1.hash(Data(password.utf8))))
    }

    /// How often the password with SHA-1 `hash` (40 upper-case hex digits) appears.
    func timesLeaked(hash target: [UInt8]) throws -> Int {
        var low = 0, high = size  // Invariant: the target's line, if any, starts in low..<high; low is a line start.
        var below: [UInt8]?, above: [UInt8]?  // Hashes seen at the bounds: every probe must lie between them.
        while high - low > Self.scanSize {
            let middle = (low + high) / 2
            guard let (start, line) = try line(startingAtOrAfter: middle), start < high else { high = middle; continue }
            let (hash, count) = try parse(line)
            if let below, hash.lexicographicallyPrecedes(below) { throw Failure.notSorted(path: path) }
            if let above, above.lexicographicallyPrecedes(hash) { throw Failure.notSorted(path: path) }
            if hash == target { return count }
            if hash.lexicographicallyPrecedes(target) {
                (low, below) = (start + line.count, hash)
            } else {
                (high, above) = (start, hash)
            }
        }
        let chunk = try read(at: low, count: min(size, high + Self.longestLine) - low)
        var start = 0
        while start < chunk.count, low + start < high {
            guard let end = chunk[start...].firstIndex(of: UInt8(ascii: "\n")) ?? (low + chunk.count == size ? chunk.count : nil) else {
                throw Failure.notAList(path: path, detail: "a line longer than \(Self.longestLine) bytes")
            }
            let line = Array(chunk[start..<min(end + 1, chunk.count)])
            if !line.allSatisfy({ $0 == 10 || $0 == 13 }) {
                let (hash, count) = try parse(line)
                if hash == target { return count }
            }
            start = end + 1
        }
        return 0
    }

    /// The first line that starts at or after `offset` and its start (nil past the end).
    private func line(startingAtOrAfter offset: Int) throws -> (start: Int, line: [UInt8])? {
        var start = offset
        if offset > 0 {
            let before = try read(at: offset - 1, count: min(Self.longestLine + 1, size - offset + 1))
            guard let newline = before.firstIndex(of: UInt8(ascii: "\n")) else {
                if offset - 1 + before.count >= size { return nil }
                throw Failure.notAList(path: path, detail: "a line longer than \(Self.longestLine) bytes")
            }
            start = offset + newline
        }
        guard start < size else { return nil }
        let bytes = try read(at: start, count: min(Self.longestLine, size - start))
        let end = bytes.firstIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? bytes.count
        guard end < bytes.count || start + bytes.count == size || bytes.last == UInt8(ascii: "\n") else {
            throw Failure.notAList(path: path, detail: "a line longer than \(Self.longestLine) bytes")
        }
        return (start, Array(bytes[..<end]))
    }

    /// The hash (upper case) and count of one line (`HASH:COUNT`, `HASH` alone counts once).
    private func parse(_ line: [UInt8]) throws -> (hash: [UInt8], count: Int) {
        let text = line.filter { $0 != 10 && $0 != 13 && $0 != 32 }
        let hash = Array(text.prefix(40)).map { $0 >= 97 && $0 <= 102 ? $0 - 32 : $0 }
        guard hash.count == 40, hash.allSatisfy({ (48...57).contains($0) || (65...70).contains($0) }),
              text.count == 40 || text[40] == UInt8(ascii: ":") else {
            throw Failure.notAList(path: path, detail: "a line that is not SHA1HEX:COUNT")
        }
        let count = text.count > 41 ? Int(String(decoding: text[41...], as: UTF8.self)) : 1
        guard let count else { throw Failure.notAList(path: path, detail: "a count that is not a number") }
        return (hash, count)
    }

    private func read(at offset: Int, count: Int) throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: max(count, 0))
        var filled = 0
        while filled < buffer.count {
            let got = buffer.withUnsafeMutableBytes { pread(file.raw, $0.baseAddress! + filled, $0.count - filled, off_t(offset + filled)) }
            if got < 0 && errno == EINTR { continue }
            guard got >= 0 else { throw FileReading.error(errno, .read, path) }
            if got == 0 { break }
            filled += got
        }
        return Array(buffer[..<filled])
    }

    /// Upper-case hex digits of `bytes`.
    static func hexDigits(_ bytes: Data) -> [UInt8] {
        let digits = Array("0123456789ABCDEF".utf8)
        return bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] }
    }
}

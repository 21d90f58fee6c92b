import Foundation
@testable import MyPassSync
@testable import SyncCommit
@testable import SyncFiles
@testable import SyncRemote
@testable import SyncState
@testable import SyncWatch
import Testing

/// The binary search over an HIBP list: first and last lines, a list without a final line end, lower
/// case, counts, sizes around the point where the search switches to scanning, and malformed lists.
@Suite("Leaked-password list lookup")
struct LeakedPasswordListTests {
    private static func sha1Hex(_ text: String) -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", "import hashlib, sys; print(hashlib.sha1(sys.argv[1].encode()).hexdigest().upper())", text]
        let pipe = Pipe()
        process.standardOutput = pipe
        try? process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private static func write(_ lines: [String], ending: String, finalEnding: Bool = true) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("hibp-\(UUID().uuidString).txt").path
        try (lines.joined(separator: ending) + (finalEnding ? ending : "")).write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test("every line found (first and last too) and gaps missed, for lists of 1 to 40,000 lines, with and without a final line end",
          arguments: [1, 2, 3, 300, 40_000])
    func lookups(size: Int) throws {
        var generator = SystemRandomNumberGenerator()
        var hashes = Set([Self.sha1Hex("pässword")])
        while hashes.count < size {
            hashes.insert((0..<5).map { _ in String(format: "%08X", UInt32.random(in: 1 ... .max - 1, using: &generator)) }.joined())
        }
        let ordered = hashes.sorted()
        // Lower case on every other line, CRLF endings, counts that tell the lines apart.
        let lines = ordered.enumerated().map { index, hash in "\(index % 2 == 0 ? hash : hash.lowercased()):\(index + 1)" }
        let probes = size <= 300 ? Array(ordered.indices) : [0, 1, size / 2, size - 2, size - 1] + (0..<200).map { _ in Int.random(in: 0..<size) }
        for finalEnding in [true, false] {
            let path = try Self.write(lines, ending: "\r\n", finalEnding: finalEnding)
            defer { try? FileManager.default.removeItem(atPath: path) }
            let list = try LeakedPasswordList(path: path)
            for index in probes {
                #expect(try list.timesLeaked(hash: Array(ordered[index].utf8)) == index + 1, "line \(index + 1) of \(size)")
            }
            #expect(try list.timesLeaked("pässword") == ordered.firstIndex(of: Self.sha1Hex("pässword")).map { $0 + 1 })
            #expect(try list.timesLeaked(hash: Array(String(repeating: "0", count: 40).utf8)) == 0)
            #expect(try list.timesLeaked(hash: Array(String(repeating: "F", count: 40).utf8)) == 0)
            #expect(try list.timesLeaked("not in the list") == 0)
        }
    }

    @Test("an empty list finds nothing; a list of something else or out of order is refused")
    func malformed() throws {
        let empty = try Self.write([], ending: "\n", finalEnding: false)
        #expect(try LeakedPasswordList(path: empty).timesLeaked("x") == 0)
        let prose = try Self.write(Array(repeating: "not a hash at all", count: 4000), ending: "\n")
        #expect(throws: LeakedPasswordList.Failure.self) { try LeakedPasswordList(path: prose).timesLeaked("x") }
        let descending = try Self.write((0..<4000).map { String(format: "%040X:1", 4000 - $0) }, ending: "\n")
        #expect(throws: LeakedPasswordList.Failure.self) { try LeakedPasswordList(path: descending).timesLeaked("x") }
        #expect(throws: (any Error).self) { try LeakedPasswordList(path: "/tmp") }
    }
}

import Foundation
import Testing
import TestSupport

/// What the command line does with files that are not vaults, or hostile ones: a clear message, the
/// documented exit code, nothing written, and no hang.
@Suite("Hostile and wrong inputs on the command line")
struct HostileInputCLITests {
    struct Measured: Decodable {
        let status: Int32
        let seconds: Double
        let maxRSSKB: Int
        let stderr: String
    }

    /// Runs `mypass-sync arguments` under Helpers/measure.py: exit status, wall time, peak memory.
    static func measured(_ arguments: [String], input: String = "") throws -> Measured {
        try ToolRunner.helperReport("measure.py", [], arguments, input: input)
    }

    /// The bounds every hostile input must stay within (a guard against runaway work, not a speed
    /// target): a second of wall time, 100 MB of memory.
    static func expectBounded(_ run: Measured, _ label: String) {
        #expect(run.seconds < 1.0, "\(label) took \(run.seconds) s")
        #expect(run.maxRSSKB < 100_000, "\(label) peaked at \(run.maxRSSKB) KiB")
    }

    @Test("things that are not vault files are refused with exit 7 or 4", arguments: [
        ("/tmp", Int32(7), "not a regular file"),
        ("/dev/zero", 7, "not a regular file"),
        ("/dev/urandom", 7, "not a regular file"),
        ("/nonexistent/pw.kdbx", 7, "no such file"),
    ])
    func notVaults(path: String, status: Int32, message: String) throws {
        let outcome = try Self.measured(["info", path])
        #expect(outcome.status == status)
        #expect(outcome.stderr.contains(message), "\(outcome.stderr)")
        Self.expectBounded(outcome, path)
    }

    @Test("empty, tiny and foreign files are 'not a KDBX file' (exit 4)", arguments: [Data(), Data([0x03, 0xD9]), Data(repeating: 0x41, count: 4096)])
    func notKDBX(bytes: Data) throws {
        let directory = try CLIFixtures.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("broken.kdbx").path
        try bytes.write(to: URL(fileURLWithPath: path))
        let outcome = try Self.measured(["ls", "--password-stdin", path], input: "pw\n")
        #expect(outcome.status == 4)
        #expect(outcome.stderr.contains("KDBX") || outcome.stderr.contains("truncated"), "\(outcome.stderr)")
        Self.expectBounded(outcome, "\(bytes.count) bytes")
    }

    @Test("a damaged payload is corruption (exit 4), a wrong password is wrong credentials (exit 3)")
    func damagedVersusWrongPassword() throws {
        let directory = try CLIFixtures.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        var bytes = try Data(contentsOf: URL(fileURLWithPath: CLIFixtures.kdbx4))
        bytes[bytes.count - 40] ^= 0x01  // inside the last HMAC block
        let path = directory.appendingPathComponent("damaged.kdbx").path
        try bytes.write(to: URL(fileURLWithPath: path))
        let damaged = try Self.measured(["ls", "--password-stdin", path], input: CLIFixtures.kdbx4Password + "\n")
        #expect(damaged.status == 4, "\(damaged.stderr)")
        Self.expectBounded(damaged, "damaged payload")
        let wrong = try Self.measured(["ls", "--password-stdin", CLIFixtures.kdbx4], input: "not the password\n")
        #expect(wrong.status == 3, "\(wrong.stderr)")
        Self.expectBounded(wrong, "wrong password")
    }

    @Test("a key file that is a directory or missing is an I/O error (exit 7), not wrong credentials")
    func badKeyFiles() throws {
        for keyFile in ["/tmp", "/nonexistent/key"] {
            let outcome = try ToolRunner.run(["ls", "--password-stdin", "--key-file", keyFile, CLIFixtures.kdbx4], input: CLIFixtures.kdbx4Password + "\n")
            #expect(outcome.status == 7, "\(keyFile): \(outcome.standardError)")
        }
    }

    @Test("an Argon2 memory bomb in the header is refused before the password is asked (exit 6), and opens nothing")
    func kdfBomb() throws {
        let directory = try CLIFixtures.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: CLIFixtures.kdbx4)))
        // The VariantDictionary entry "M" (UInt64 memory): type 0x05, key length 1, "M", value length 8.
        let marker: [UInt8] = [0x05, 0x01, 0x00, 0x00, 0x00, 0x4D, 0x08, 0x00, 0x00, 0x00]
        let start = try #require((0...(bytes.count - marker.count)).first { Array(bytes[$0..<($0 + marker.count)]) == marker })
        bytes.replaceSubrange((start + marker.count)..<(start + marker.count + 8), with: [0, 0, 0, 0, 0, 0, 0, 0x40])  // 2^62
        let path = directory.appendingPathComponent("bomb.kdbx").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let outcome = try Self.measured(["ls", path])  // No password given: it must not get as far as asking.
        #expect(outcome.status == 6, "\(outcome.stderr)")
        #expect(outcome.stderr.contains("--max-kdf-memory"), "\(outcome.stderr)")
        Self.expectBounded(outcome, "Argon2 bomb")
        let info = try ToolRunner.run(["info", path])
        #expect(info.status == 0 && info.standardOutput.contains("argon2d"), "info reads the header without deriving: \(info.standardError)")
    }
}

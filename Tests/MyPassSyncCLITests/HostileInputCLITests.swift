import Foundation
import Testing

/// What the command line does with files that are not vaults, or hostile ones: a clear message, the
/// documented exit code, nothing written, and no hang.
@Suite("Hostile and wrong inputs on the command line")
struct HostileInputCLITests {
    @Test("things that are not vault files are refused with exit 7 or 4", arguments: [
        ("/tmp", Int32(7), "not a regular file"),
        ("/dev/zero", 7, "not a regular file"),
        ("/dev/urandom", 7, "not a regular file"),
        ("/nonexistent/pw.kdbx", 7, "no such file"),
    ])
    func notVaults(path: String, status: Int32, message: String) throws {
        let outcome = try ToolRunner.run(["info", path])
        #expect(outcome.status == status)
        #expect(outcome.standardError.contains(message), "\(outcome.standardError)")
    }

    @Test("empty, tiny and foreign files are 'not a KDBX file' (exit 4)", arguments: [Data(), Data([0x03, 0xD9]), Data(repeating: 0x41, count: 4096)])
    func notKDBX(bytes: Data) throws {
        let directory = try CLIFixtures.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("broken.kdbx").path
        try bytes.write(to: URL(fileURLWithPath: path))
        let outcome = try ToolRunner.run(["ls", "--password-stdin", path], input: "pw\n")
        #expect(outcome.status == 4)
        #expect(outcome.standardError.contains("KDBX") || outcome.standardError.contains("truncated"), "\(outcome.standardError)")
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
        let outcome = try ToolRunner.run(["ls", path])  // No password given: it must not get as far as asking.
        #expect(outcome.status == 6, "\(outcome.standardError)")
        #expect(outcome.standardError.contains("--max-kdf-memory"), "\(outcome.standardError)")
        let info = try ToolRunner.run(["info", path])
        #expect(info.status == 0 && info.standardOutput.contains("argon2d"), "info reads the header without deriving: \(info.standardError)")
    }
}

import Foundation
import Testing

@Suite("Password prompt on a real terminal")
struct PasswordPromptTests {
    struct Screen: Decodable {
        let status: Int32
        let screen: String
        /// Whether the terminal echoes input after the command ended.
        let echo: Bool
    }

    /// Runs `mypass-sync arguments` on a pseudo-terminal and types `line` at the password prompt.
    static func typeAtPrompt(_ line: String, _ arguments: [String]) throws -> Screen {
        try ToolRunner.helperReport("type_at_prompt.py", [line], arguments)
    }

    @Test("the prompt reads the password with echo off and the vault opens")
    func promptWithoutEcho() throws {
        let result = try Self.typeAtPrompt(CLIFixtures.kdbx4Password, ["export", CLIFixtures.kdbx4])
        #expect(result.status == 0)
        #expect(result.screen.contains("Password for py-4.0-aes256-argon2d-gzip.kdbx: "))
        #expect(!result.screen.contains(CLIFixtures.kdbx4Password + "\r\n{"), "the typed password was echoed")
        #expect(result.screen.components(separatedBy: CLIFixtures.kdbx4Password).count == 1, "password echoed")
        #expect(result.screen.contains("\"gh-Pässwörd-2\""))
        #expect(result.screen.contains("warning: the export below contains every secret"))
    }

    @Test("Ctrl-C at the prompt ends the command (exit 130) with the terminal's echo restored")
    func interruptRestoresEcho() throws {
        let result = try Self.typeAtPrompt("^C", ["ls", CLIFixtures.kdbx31])
        #expect(result.status == 130)
        #expect(result.echo, "the terminal was left without echo")
    }

    @Test("a wrong password typed at the prompt exits 3")
    func wrongPasswordAtPrompt() throws {
        let result = try Self.typeAtPrompt("not-it", ["export", CLIFixtures.kdbx4])
        #expect(result.status == 3)
        #expect(!result.screen.contains("not-it"))
        #expect(result.screen.contains("error: wrong password or key file"))
    }
}

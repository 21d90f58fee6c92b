import Foundation
import Testing

@Suite("mypass-sync match (end to end)")
struct MatchCommandTests {
    @Test("suggests the fixture's GitHub entry for a GitHub subdomain, nothing for a look-alike; passwords only with --reveal")
    func match() throws {
        let input = CLIFixtures.kdbx31Password + "\n"
        let hit = try ToolRunner.run(["match", "--password-stdin", CLIFixtures.kdbx31, "https://login.github.com/session"], input: input)
        #expect(hit.status == 0 && hit.standardOutput.hasPrefix("/Internet/GitHub  alice2  https://github.com"), "\(hit.standardOutput)")
        #expect(!hit.standardOutput.contains("gh-P"))
        let miss = try ToolRunner.run(["match", "--json", "--password-stdin", CLIFixtures.kdbx31, "https://github.com.evil.io"], input: input)
        let object = try JSONSerialization.jsonObject(with: Data(miss.standardOutput.utf8)) as? [String: Any]
        #expect((object?["suggested"] as? [Any])?.isEmpty == true && object?["all"] as? Int == 3)
        let list = object?["publicSuffixList"] as? [String: String]
        #expect(list?["source"] == "/usr/share/publicsuffix/public_suffix_list.dafsa" && list?["date"]?.hasPrefix("20") == true,
                "\(String(describing: list))")
        let revealed = try ToolRunner.run(["match", "--json", "--reveal", "--password-stdin", CLIFixtures.kdbx31, "github.com"], input: input)
        let entries = (try JSONSerialization.jsonObject(with: Data(revealed.standardOutput.utf8)) as? [String: Any])?["suggested"] as? [[String: Any]]
        #expect(entries?.first?["password"] as? String == "gh-Pässwörd-1")
    }
}

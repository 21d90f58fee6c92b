import Foundation
import Testing
import TestSupport

/// estimate, diceware, the strength printed by generate and add, and analyze against an offline HIBP
/// list — each checked against keepassxc-cli where it has the same command.
@Suite("Password tools: estimate, diceware, analyze --hibp (end to end)", .serialized)
struct PasswordCommandTests {
    private static func keepassxc(_ arguments: [String], input: String) throws -> ProcessRunner.Outcome {
        try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), ["keepassxc-cli"] + arguments, input: Data(input.utf8),
                              environment: ["QT_QPA_PLATFORM": "offscreen"])
    }

    /// The "Entropy N" figure of a keepassxc-cli or mypass-sync estimate line.
    private static func entropy(_ line: String) -> String? {
        line.split(separator: "\t").first { $0.hasPrefix("Entropy ") }.map { String($0.dropFirst(8)) }
    }

    @Test("estimate gives keepassxc-cli's entropy and log10 for every password (zxcvbn-c), with KeePassXC's rating")
    func estimateMatchesKeePassXC() throws {
        let passwords = ["password123", "correct horse battery staple", "Tr0ub4dour&3", "qwertyuiop", "aaaaaaaaaa", "Xk9#mP2$vL7@nQ4!",
                         "pässwörd✓2024", "19700101", "abcdefghijklmnopqrstuvwxyz0123456789", ""]
        for password in passwords {
            let ours = try ToolRunner.run(["estimate"], input: password + "\n")
            #expect(ours.status == 0, "\(ours.standardError)")
            let theirs = try Self.keepassxc(["estimate"], input: password + "\n").output
            #expect(Self.entropy(ours.standardOutput) != nil && Self.entropy(ours.standardOutput) == Self.entropy(theirs),
                    "\(password): ours \(ours.standardOutput), keepassxc-cli \(theirs)")
            #expect(ours.standardOutput.contains("Log10 " + (theirs.components(separatedBy: "Log10 ").last ?? "?").prefix(5)))
        }
        #expect(try ToolRunner.run(["estimate"], input: "password123\n").standardOutput.hasSuffix("Strength poor\n"))
        #expect(try ToolRunner.run(["estimate"], input: "Xk9#mP2$vL7@nQ4!\n").standardOutput.hasSuffix("Strength good\n"))
        let strong = try ToolRunner.run(["estimate"], input: "vU3!qZ8#rT6@wP1$yS5%\n").standardOutput
        #expect(strong.hasSuffix("Strength excellent\n"), "\(strong)")
        let advanced = try ToolRunner.run(["estimate", "-a"], input: "password123\n").standardOutput
        #expect(advanced.contains("Type: Dictionary") && advanced.contains("\tpassword\n") && advanced.contains("Type: Sequence"), "\(advanced)")
    }

    @Test("estimate refuses a password in argv (the process list shows it) with exit 2")
    func estimateRefusesArgv() throws {
        let outcome = try ToolRunner.run(["estimate", "hunter2"])
        #expect(outcome.status == 2)
        #expect(outcome.standardError.contains("standard input") && !outcome.standardOutput.contains("Entropy"))
    }

    @Test("generate and add --generate print the strength; the password alone goes to standard output")
    func generatedStrength() throws {
        let generated = try ToolRunner.run(["generate", "-L", "24"])
        #expect(generated.standardOutput.count == 25 && generated.standardError.contains("bits ("), "\(generated.standardError)")
        let vault = try ScratchVault()
        defer { vault.remove() }
        let added = try vault.run(["add", vault.vault, "/Generated", "--generate", "--length", "20"])
        #expect(added.status == 0 && added.standardOutput.contains("generated password: Entropy "), "\(added.standardOutput)")
        let stored = try #require(try vault.pykeepass("Generated")).password
        let line = added.standardOutput.split(separator: "\n").last.map(String.init) ?? ""
        let estimated = try ToolRunner.run(["estimate"], input: stored + "\n").standardOutput
        #expect(line.contains(String(format: "Entropy %.1f bits", Double(Self.entropy(estimated) ?? "") ?? -1)), "\(line) vs \(estimated)")
    }

    @Test("diceware: 7 words of EFF's list by default, -W words, -w a list with or without dice digits; small or missing lists refused")
    func diceware() throws {
        let eff = try String(contentsOfFile: "/usr/lib/python3/dist-packages/diceware/wordlists/wordlist_en_eff.txt", encoding: .utf8)
        let effWords = Set(eff.split(separator: "\n").compactMap { $0.split(separator: "\t").last.map(String.init) })
        #expect(effWords.count == 7776)
        let first = try ToolRunner.run(["diceware"])
        let words = first.standardOutput.trimmingCharacters(in: .newlines).split(separator: " ").map(String.init)
        #expect(words.count == 7 && words.allSatisfy(effWords.contains), "\(first.standardOutput)")
        #expect(first.standardError.contains("Entropy 90.5 bits"), "\(first.standardError)")
        #expect(try ToolRunner.run(["diceware"]).standardOutput != first.standardOutput, "two passphrases alike")
        #expect(try ToolRunner.run(["diceware", "-W", "3"]).standardOutput.split(separator: " ").count == 3)
        let directory = try CLIFixtures.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let plain = directory.appendingPathComponent("plain.txt").path
        try (0..<2048).map { "wörd\($0)" }.joined(separator: "\n").write(toFile: plain, atomically: true, encoding: .utf8)
        let custom = try ToolRunner.run(["diceware", "-W", "5", "-w", plain])
        #expect(custom.standardOutput.split(separator: " ").allSatisfy { $0.hasPrefix("wörd") } && custom.standardError.contains("55.0 bits"))
        let small = directory.appendingPathComponent("small.txt").path
        try "one\ntwo\nthree\n".write(toFile: small, atomically: true, encoding: .utf8)
        let refused = try ToolRunner.run(["diceware", "-w", small])
        #expect(refused.status == 2 && refused.standardError.contains("3 distinct words") && refused.standardOutput.isEmpty)
        #expect(try ToolRunner.run(["diceware", "-w", directory.appendingPathComponent("none").path]).status == 7)
    }

    @Test("analyze --hibp finds the same leaked passwords as keepassxc-cli in a 2-million-line list, without loading it")
    func analyzeHIBP() throws {
        let vault = try ScratchVault()
        defer { vault.remove() }
        // Leaked: the current passwords of two entries (one non-ASCII) and the old one in GitHub's history,
        // which must not count; an entry moved to the recycle bin is not checked either.
        #expect(try vault.run(["add", vault.vault, "/Old account", "--entry-password-stdin"], lines: ["binned-pw"]).status == 0)
        #expect(try vault.run(["rm", vault.vault, "/Old account"]).status == 0)
        let list = vault.directory.appendingPathComponent("pwned-passwords-sha1-ordered-by-hash.txt").path
        let helper = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Helpers/hibp_list.py").path
        let made = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"),
                                         ["python3", helper, list, "2000000", "carol-pw:7", "gh-Pässwörd-2:1", "gh-Pässwörd-1:3", "binned-pw:9"])
        #expect(made.status == 0, "\(made.standardError)")
        let ours = try vault.run(["analyze", vault.vault, "--hibp", list])
        #expect(ours.status == 0, "\(ours.standardError)")
        let theirs = try vault.keepassxc(["analyze", "--hibp", list, vault.vault])
        let leakLines = { (text: String) in text.split(separator: "\n").filter { $0.hasPrefix("Password for") }.map(String.init) }
        #expect(leakLines(ours.standardOutput) == ["Password for 'No URL' has been leaked 7 times!",
                                                  "Password for 'Internet/GitHub' has been leaked 1 time!"], "\(ours.standardOutput)")
        #expect(leakLines(ours.standardOutput) == leakLines(theirs.output + theirs.standardError), "keepassxc-cli: \(theirs.output)")
        let json = try vault.run(["analyze", vault.vault, "--hibp", list, "--json", "--exit-code"])
        #expect(json.status == 1)
        let report = try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any]
        let leaked = report?["leaked"] as? [[String: Any]] ?? []
        #expect(leaked.map { $0["path"] as? String } == ["/No URL", "/Internet/GitHub"] && leaked.first?["timesLeaked"] as? Int == 7)
        // The 90 MB list is searched, not read: peak memory as with a list of three lines.
        let measure = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Helpers/measure.py").path
        func peak(_ listPath: String) throws -> Int {
            let outcome = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"),
                                                ["python3", measure, try ToolRunner.binary().path, "analyze", vault.vault, "--hibp", listPath,
                                                 "--password-stdin", "--state-dir", vault.stateDirectory],
                                                input: Data((ScratchVault.password + "\n").utf8))
            return (try JSONSerialization.jsonObject(with: outcome.standardOutput) as? [String: Any])?["maxRSSKB"] as? Int ?? -1
        }
        let tiny = vault.directory.appendingPathComponent("tiny.txt").path
        #expect(try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", helper, tiny, "2", "carol-pw:7"]).status == 0)
        let (big, small) = (try peak(list), try peak(tiny))
        #expect(big > 0 && small > 0 && big < small + 8_000, "peak \(big) KiB with the 90 MB list, \(small) KiB with a tiny one")
    }

    @Test("analyze refuses a list that is not sorted by hash or not HIBP's format (exit 7), before asking for the password")
    func analyzeBadLists() throws {
        let vault = try ScratchVault()
        defer { vault.remove() }
        let unsorted = vault.directory.appendingPathComponent("by-prevalence.txt").path
        let lines = (0..<5000).map { String(format: "%040X:%d\r\n", $0 &* 2_654_435_761 % 1_000_003, 5000 - $0) }
        try lines.joined().write(toFile: unsorted, atomically: true, encoding: .utf8)
        let refused = try vault.run(["analyze", vault.vault, "--hibp", unsorted])
        #expect(refused.status == 7 && refused.standardError.contains("not sorted by hash"), "\(refused.standardError)")
        let notAList = vault.directory.appendingPathComponent("notes.txt").path
        try String(repeating: "these are not hashes\n", count: 3000).write(toFile: notAList, atomically: true, encoding: .utf8)
        let wrong = try vault.run(["analyze", vault.vault, "--hibp", notAList])
        #expect(wrong.status == 7 && wrong.standardError.contains("not a HIBP SHA-1 list"), "\(wrong.standardError)")
        let missing = try ToolRunner.run(["analyze", vault.vault, "--hibp", "/nonexistent/list.txt"])  // no password given: not asked
        #expect(missing.status == 7 && missing.standardError.contains("no such file"))
    }
}

import Foundation
import Testing
import TestSupport

/// `merge --explain`, `diff --explain` and the explanation in their JSON: per differing property the
/// three states, the side taken and the rule; protected values only as per-merge fingerprints.
@Suite("merge and diff --explain: every decision with its states and rule (end to end)", .serialized)
struct MergeExplainTests {
    /// Two copies of the fixture that diverged: A edits the user name of "No URL"; a second later B
    /// edits it too, adds a field, sets a new GitHub password, moves an entry and deletes another;
    /// both set the same protected recovery code on GitHub.
    struct Diverged {
        let vault: ScratchVault
        let other: String

        init() throws {
            vault = try ScratchVault()
            other = vault.otherCopy
            let recovery = ["--field-stdin", "Recovery", "--protect", "Recovery"]
            try vault.diverge(here: [(["edit", vault.vault, "/No URL", "-u", "alice-local"], []),
                                     (["edit", vault.vault, "/Internet/GitHub"] + recovery, ["same-recovery-secret"])],
                              there: [(["edit", other, "/No URL", "-u", "bob-remote", "--field", "Pin=1234"], []),
                                      (["edit", other, "/Internet/GitHub", "--entry-password-stdin"] + recovery, ["gh-brand-new-secret", "same-recovery-secret"]),
                                      (["mv", other, "/Bänk & Co ✓/Ünïcode Bank", "/Internet"], [])])
        }

        /// The command's JSON document (diff keeps no sync state: no --state-dir).
        func json(_ arguments: [String]) throws -> [String: Any] {
            let outcome = arguments[0] == "diff"
                ? try ToolRunner.run(arguments + ["--password-stdin"], input: ScratchVault.password + "\n")
                : try vault.run(arguments)
            #expect(outcome.status == 0 || outcome.status == 1, "\(outcome.standardError)")
            #expect(SecretScan.firstSecret(in: outcome.standardOutput) == nil)
            for secret in ["same-recovery-secret", "gh-brand-new-secret"] { #expect(!outcome.standardOutput.contains(secret), "\(secret) shown") }
            return (try? JSONSerialization.jsonObject(with: Data(outcome.standardOutput.utf8)) as? [String: Any]) ?? [:]
        }
    }

    static func decision(_ explanation: [[String: Any]], _ path: String, _ field: String) -> [String: Any]? {
        explanation.first { $0["path"] as? String == path && $0["field"] as? String == field }
    }

    @Test("merge --json: the rule, the states and the side for each kind of decision; protected values only as fingerprints")
    func mergeExplanation() throws {
        let scene = try Diverged()
        defer { scene.vault.remove() }
        let report = try scene.json(["merge", scene.vault.vault, scene.other, "--dry-run", "--json"])
        let explanation = try #require((report["sections"] as? [[String: Any]])?.first?["explanation"] as? [[String: Any]])
        let user = try #require(Self.decision(explanation, "/No URL", "UserName"))
        #expect(user["rule"] as? String == "conflictFieldChangedLater" && user["result"] as? String == "remote", "\(user)")
        #expect(user["ancestor"] as? String == "inferredFromHistory")
        #expect((user["base"] as? [String: Any])?["value"] as? String == "carol")
        #expect((user["local"] as? [String: Any])?["value"] as? String == "alice-local")
        #expect((user["remote"] as? [String: Any])?["value"] as? String == "bob-remote")
        #expect(user["localTime"] as? String != nil && user["remoteTime"] as? String != nil && user["localTime"] as? String != user["remoteTime"] as? String)
        let pin = try #require(Self.decision(explanation, "/No URL", "Pin"))
        #expect(pin["rule"] as? String == "onlyRemoteChanged" && (pin["local"] as? [String: Any])?["absent"] as? Bool == true)
        let password = try #require(Self.decision(explanation, "/Internet/GitHub", "Password"))
        #expect(password["rule"] as? String == "onlyRemoteChanged", "\(password)")
        let fingerprint = { (state: Any?) in (state as? [String: Any])?["fingerprint"] as? String }
        #expect((password["local"] as? [String: Any])?["protected"] as? Bool == true)
        #expect(fingerprint(password["local"]) != nil && fingerprint(password["local"]) == fingerprint(password["base"]), "unchanged locally")
        #expect(fingerprint(password["remote"]) != fingerprint(password["local"]))
        let recovery = try #require(Self.decision(explanation, "/Internet/GitHub", "Recovery"))
        #expect(recovery["rule"] as? String == "bothSameValue" && fingerprint(recovery["local"]) == fingerprint(recovery["remote"]), "\(recovery)")
        let moved = try #require(Self.decision(explanation, "/Internet/Ünïcode Bank", "Location"))
        #expect(moved["rule"] as? String == "moveByLocationChanged" && (moved["remote"] as? [String: Any])?["value"] as? String == "/Internet")

        // The salt is per merge: the same secret has another fingerprint in the next explanation.
        let again = try scene.json(["merge", scene.vault.vault, scene.other, "--dry-run", "--json"])
        let second = try #require((again["sections"] as? [[String: Any]])?.first?["explanation"] as? [[String: Any]])
        #expect(fingerprint(Self.decision(second, "/Internet/GitHub", "Recovery")?["local"]) != fingerprint(recovery["local"]))
    }

    @Test("merge --explain and diff --explain in text; diff --explain --json; a merge that writes still explains")
    func textAndDiff() throws {
        let scene = try Diverged()
        defer { scene.vault.remove() }
        let text = try scene.vault.run(["merge", scene.vault.vault, scene.other, "--dry-run", "--explain"])
        #expect(text.standardOutput.contains(
            #"/No URL UserName: ancestor (from history) "carol", local "alice-local", remote "bob-remote" -> remote by conflictFieldChangedLater"#),
            "\(text.standardOutput)")
        #expect(text.standardOutput.contains("/Internet/GitHub Recovery:") && text.standardOutput.contains("-> local by bothSameValue"))
        #expect(!text.standardOutput.contains("same-recovery-secret"))
        let diff = try scene.json(["diff", scene.vault.vault, scene.other, "--explain", "--json"])
        let explanation = try #require(diff["explanation"] as? [[String: Any]])
        #expect(Self.decision(explanation, "/No URL", "Pin")?["rule"] as? String == "onlyRemoteChanged")
        let plain = try scene.json(["diff", scene.vault.vault, scene.other, "--json"])
        #expect(plain["explanation"] == nil, "only with --explain")
        let written = try scene.json(["merge", scene.vault.vault, scene.other, "--json"])
        #expect(written["written"] as? String == scene.vault.vault)
        #expect(((written["sections"] as? [[String: Any]])?.first?["explanation"] as? [Any])?.isEmpty == false)
    }

    @Test("a save by keepassxc-cli writes the standard fields pykeepass left out as empty: not a change (only the real edit shows)")
    func emptyStandardFieldsAreAbsent() throws {
        let vault = try ScratchVault()
        defer { vault.remove() }
        let resaved = vault.directory.appendingPathComponent("resaved.kdbx").path
        try FileManager.default.copyItem(atPath: vault.vault, toPath: resaved)
        let edited = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), ["keepassxc-cli", "edit", "-q", "-u", "kxc-user", resaved, "Internet/GitHub"],
                                           input: Data((ScratchVault.password + "\n").utf8), environment: ["QT_QPA_PLATFORM": "offscreen"])
        #expect(edited.status == 0, "\(edited.standardError)")
        let diff = try ToolRunner.run(["diff", vault.vault, resaved, "--json", "--explain", "--password-stdin"], input: ScratchVault.password + "\n")
        let json = try JSONSerialization.jsonObject(with: Data(diff.standardOutput.utf8)) as? [String: Any]
        let changed = (json?["changes"] as? [[String: Any]] ?? []).filter { $0["kind"] as? String != "historyMerged" }
        #expect(changed.count == 1 && changed.first?["path"] as? String == "/Internet/GitHub" && changed.first?["fields"] as? [String] == ["UserName"],
                "\(changed)")
        #expect((json?["explanation"] as? [Any])?.count == 1, "\(json?["explanation"] ?? "")")
    }
}

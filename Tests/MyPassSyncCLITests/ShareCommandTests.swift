import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing
import TestSupport

/// `mypass-sync share` end to end: the built binary on vaults keepassxc-cli made, containers read
/// back by keepassxc-cli with the container password. No container password is ever printed.
@Suite("mypass-sync share: KeeShare containers with the real keepassxc-cli (end to end)", .serialized, .timeLimit(.minutes(10)))
struct ShareCommandTests {
    static let containerPassword = "container-pässword-7Q"

    /// One test's folder, its vaults' passwords and the output of every command run (checked for
    /// the container passwords).
    final class Bench {
        let folder: URL
        private(set) var printed: [String] = []

        init() throws {
            folder = try CLIFixtures.scratch()
        }

        deinit { try? FileManager.default.removeItem(at: folder) }

        func url(_ name: String) -> URL { folder.appendingPathComponent(name) }

        /// A vault made by keepassxc-cli with these groups and entries ("Family/Bank" → user, password).
        func makeVault(_ name: String, password: String, groups: [String], entries: [(path: String, user: String, secret: String)]) throws -> URL {
            let vault = url(name)
            try FileManager.default.createDirectory(at: vault.deletingLastPathComponent(), withIntermediateDirectories: true)
            try KeePassXCCLI.create(vault, password: password)
            for group in groups { try KeePassXCCLI.run(["mkdir", "-q", vault.path, group], password: password) }
            for entry in entries {
                try KeePassXCCLI.run(["add", "-q", "-u", entry.user, "-p", vault.path, entry.path], password: password, input: entry.secret + "\n")
            }
            return vault
        }

        /// `mypass-sync ARGUMENTS VAULT-ARGUMENTS --password-stdin --state-dir STATE` with the vault
        /// password and `lines` on standard input.
        @discardableResult
        func tool(_ arguments: [String], password: String, state: String, lines: [String] = []) throws -> ToolRunner.Outcome {
            let outcome = try ToolRunner.run(arguments + ["--password-stdin", "--state-dir", url(state).path],
                                             input: ([password] + lines).map { $0 + "\n" }.joined())
            printed.append(outcome.standardOutput + outcome.standardError)
            return outcome
        }

        /// Records an issue for each command whose output held `secret`.
        func expectNeverPrinted(_ secret: String, sourceLocation: SourceLocation = #_sourceLocation) {
            for (index, text) in printed.enumerated() where text.contains(secret) {
                Issue.record("command \(index + 1) of \(printed.count) printed the container password", sourceLocation: sourceLocation)
            }
        }
    }

    /// The bytes of the file at `url` (nil: none).
    private func bytes(_ url: URL) -> Data? { FileManager.default.contents(atPath: url.path) }

    /// The titles keepassxc-cli lists in `vault` (`ls -R -f`), sorted.
    private func paths(_ vault: URL, _ password: String) throws -> [String] {
        try KeePassXCCLI.paths(vault, password: password).filter { $0 != "[empty]" }.sorted()
    }

    // MARK: - 1. add, ls, sync, remove

    @Test("add --export-to, sync writes the group's entries only (keepassxc-cli reads them with the container password), ls --json, remove leaves the container")
    func roundTrip() throws {
        let bench = try Bench()
        let password = "vault-pässword-1"
        let vault = try bench.makeVault("vault.kdbx", password: password, groups: ["Family", "Private"], entries: [
            ("Family/Bank", "alice", "bank-secret-1"), ("Family/Wifi", "home", "wifi-secret-2"), ("Private/Diary", "me", "diary-secret-3"),
        ])
        let container = bench.url("family.kdbx")

        let added = try bench.tool(["share", "add", vault.path, "/Family", "--export-to", "family.kdbx", "--container-password-stdin"],
                                   password: password, state: "state", lines: [Self.containerPassword])
        #expect(added.status == 0, "\(added.standardError)")
        #expect(added.standardOutput.contains("approved on this device"))
        #expect(bytes(container) == nil, "share add wrote the container")

        let listed = try bench.tool(["share", "ls", vault.path, "--json"], password: password, state: "state")
        #expect(listed.status == 0, "\(listed.standardError)")
        let listing = try JSONSerialization.jsonObject(with: Data(listed.standardOutput.utf8)) as? [String: Any]
        let shares = try #require(listing?["shares"] as? [[String: Any]])
        #expect(shares.count == 1)
        #expect(shares.first?["path"] as? String == "/Family")
        #expect(shares.first?["type"] as? String == "export")
        #expect(shares.first?["container"] as? String == "family.kdbx")
        #expect(shares.first?["approved"] as? Bool == true)

        let synced = try bench.tool(["share", "sync", vault.path], password: password, state: "state")
        #expect(synced.status == 0, "\(synced.standardError)")
        #expect(synced.standardOutput.contains("/Family: wrote the container"), "\(synced.standardOutput)")
        #expect(try paths(container, Self.containerPassword) == ["Bank", "Wifi"])
        let bank = try KeePassXCCLI.show(container, password: Self.containerPassword, entry: "Bank")
        #expect(bank["UserName"] == "alice")
        #expect(bank["Password"] == "bank-secret-1")
        #expect(try KeePassXCCLI.show(container, password: Self.containerPassword, entry: "Wifi")["Password"] == "wifi-secret-2")
        let containerText = try KeePassXCCLI.run(["export", "-q", "-f", "xml", container.path], password: Self.containerPassword)
        #expect(!containerText.contains("Diary") && !containerText.contains("diary-secret-3"), "the container holds Private's entry")
        #expect(throws: KeePassXCCLI.Failure.self) { try KeePassXCCLI.run(["ls", "-q", container.path], password: password) }

        // Nothing changed: in step, the container not rewritten.
        let written = bytes(container)
        let again = try bench.tool(["share", "sync", vault.path], password: password, state: "state")
        #expect(again.status == 0 && again.standardOutput.contains("/Family: in step"), "\(again.standardOutput)\(again.standardError)")
        #expect(bytes(container) == written)

        let removed = try bench.tool(["share", "remove", vault.path, "/Family"], password: password, state: "state")
        #expect(removed.status == 0, "\(removed.standardError)")
        #expect(bytes(container) == written, "share remove touched the container")
        #expect(try KeeShareReference.read(group: "Family", vault: vault, vaultPassword: password).reference == nil)
        let after = try bench.tool(["share", "ls", vault.path], password: password, state: "state")
        #expect(after.standardOutput.contains("no shared groups"), "\(after.standardOutput)")
        let idle = try bench.tool(["share", "sync", vault.path], password: password, state: "state")
        #expect(idle.status == 0)
        #expect(bytes(container) == written)
        #expect(try paths(vault, password) == ["Family/", "Family/Bank", "Family/Wifi", "Private/", "Private/Diary"])
        bench.expectNeverPrinted(Self.containerPassword)
    }

    // MARK: - 2. two vaults, one container

    @Test("two vaults with their own passwords --sync-with one container: edits of different fields and a new entry on each side reach both; then in step, the container's bytes unchanged")
    func twoVaultsSettle() throws {
        let bench = try Bench()
        let passwordA = "vault-A-pässword", passwordB = "vault-B-pässword"
        let vaultA = try bench.makeVault("a/vault.kdbx", password: passwordA, groups: ["Team", "Mine"],
                                         entries: [("Team/Router", "admin", "router-secret-1"), ("Mine/Own", "a", "own-secret-a")])
        let vaultB = try bench.makeVault("b/vault.kdbx", password: passwordB, groups: ["Shared"], entries: [])
        try FileManager.default.createDirectory(at: bench.url("shared"), withIntermediateDirectories: true)
        let container = bench.url("shared/team.kdbx")

        func sync(_ vault: URL, _ password: String, _ state: String) throws -> String {
            let outcome = try bench.tool(["share", "sync", vault.path], password: password, state: state)
            #expect(outcome.status == 0, "\(outcome.standardError)")
            return outcome.standardOutput
        }

        #expect(try bench.tool(["share", "add", vaultA.path, "/Team", "--sync-with", "../shared/team.kdbx", "--container-password-stdin"],
                               password: passwordA, state: "state-a", lines: [Self.containerPassword]).status == 0)
        _ = try sync(vaultA, passwordA, "state-a")
        #expect(try paths(container, Self.containerPassword) == ["Router"])
        #expect(try bench.tool(["share", "add", vaultB.path, "/Shared", "--sync-with", container.path, "--container-password-stdin"],
                               password: passwordB, state: "state-b", lines: [Self.containerPassword]).status == 0)
        _ = try sync(vaultB, passwordB, "state-b")
        #expect(try paths(vaultB, passwordB) == ["Shared/", "Shared/Router"])
        #expect(try KeePassXCCLI.show(vaultB, password: passwordB, entry: "Shared/Router")["Password"] == "router-secret-1")
        _ = try sync(vaultA, passwordA, "state-a")

        // Each side edits another field of Router and adds an entry.
        try KeePassXCCLI.run(["edit", "-q", "-u", "root-from-A", vaultA.path, "Team/Router"], password: passwordA)
        try KeePassXCCLI.run(["add", "-q", "-u", "nas", "-p", vaultA.path, "Team/NAS"], password: passwordA, input: "nas-secret-A\n")
        try KeePassXCCLI.run(["edit", "-q", "--url", "https://router.b.example", vaultB.path, "Shared/Router"], password: passwordB)
        try KeePassXCCLI.run(["add", "-q", "-u", "printer", "-p", vaultB.path, "Shared/Printer"], password: passwordB, input: "printer-secret-B\n")

        // Syncs in turns until neither side has anything to do.
        _ = try sync(vaultA, passwordA, "state-a")
        _ = try sync(vaultB, passwordB, "state-b")
        _ = try sync(vaultA, passwordA, "state-a")
        _ = try sync(vaultB, passwordB, "state-b")
        let settled = bytes(container)
        for (vault, password, state) in [(vaultA, passwordA, "state-a"), (vaultB, passwordB, "state-b"), (vaultA, passwordA, "state-a")] {
            let vaultBefore = bytes(vault)
            let said = try sync(vault, password, state)
            #expect(said.contains(": in step"), "\(state): \(said)")
            #expect(bytes(container) == settled, "\(state) rewrote the container though nothing changed")
            #expect(bytes(vault) == vaultBefore, "\(state) rewrote its vault though nothing changed")
        }

        for (vault, password, group) in [(vaultA, passwordA, "Team"), (vaultB, passwordB, "Shared")] {
            let router = try KeePassXCCLI.show(vault, password: password, entry: "\(group)/Router")
            #expect(router["UserName"] == "root-from-A", "\(group)")
            #expect(router["URL"] == "https://router.b.example", "\(group)")
            #expect(router["Password"] == "router-secret-1", "\(group)")
            #expect(try KeePassXCCLI.show(vault, password: password, entry: "\(group)/NAS")["Password"] == "nas-secret-A")
            #expect(try KeePassXCCLI.show(vault, password: password, entry: "\(group)/Printer")["Password"] == "printer-secret-B")
        }
        #expect(try paths(vaultA, passwordA) == ["Mine/", "Mine/Own", "Team/", "Team/NAS", "Team/Printer", "Team/Router"])
        #expect(try paths(vaultB, passwordB) == ["Shared/", "Shared/NAS", "Shared/Printer", "Shared/Router"])
        #expect(try paths(container, Self.containerPassword) == ["NAS", "Printer", "Router"])
        bench.expectNeverPrinted(Self.containerPassword)
    }

    // MARK: - 3. approval

    @Test("references made elsewhere (pykeepass, or a vault copied to a fresh state) do nothing until share approve: no container written, no import; then they act")
    func approvalNeeded() throws {
        let bench = try Bench()
        let password = "vault-pässword-3"
        let vault = try bench.makeVault("vault.kdbx", password: password, groups: ["Out", "In"],
                                        entries: [("Out/Leaving", "out", "leaving-secret-1")])
        let outbox = bench.url("out.kdbx"), inbox = bench.url("in.kdbx")
        try KeePassXCCLI.create(inbox, password: Self.containerPassword)
        try KeePassXCCLI.run(["add", "-q", "-u", "in", "-p", inbox.path, "Arriving"], password: Self.containerPassword, input: "arriving-secret-2\n")
        try KeeShareReference.set(.exporting, path: "out.kdbx", password: Self.containerPassword, group: "Out", vault: vault, vaultPassword: password)
        try KeeShareReference.set(.importing, path: "in.kdbx", password: Self.containerPassword, group: "In", vault: vault, vaultPassword: password)
        let vaultBefore = bytes(vault), inboxBefore = bytes(inbox)

        let listed = try bench.tool(["share", "ls", vault.path, "--json"], password: password, state: "state")
        let listing = try JSONSerialization.jsonObject(with: Data(listed.standardOutput.utf8)) as? [String: Any]
        let shares = try #require(listing?["shares"] as? [[String: Any]])
        #expect(shares.map { $0["approved"] as? Bool } == [false, false])
        let refused = try bench.tool(["share", "sync", vault.path], password: password, state: "state")
        #expect(refused.status == 0, "\(refused.standardError)")
        #expect(refused.standardOutput.contains("/Out: not approved on this device"), "\(refused.standardOutput)")
        #expect(refused.standardOutput.contains("/In: not approved on this device"), "\(refused.standardOutput)")
        #expect(bytes(outbox) == nil, "an unapproved export reference wrote its container")
        #expect(bytes(vault) == vaultBefore, "an unapproved import reference changed the vault")
        #expect(bytes(inbox) == inboxBefore)

        for group in ["/Out", "/In"] {
            let approved = try bench.tool(["share", "approve", vault.path, group], password: password, state: "state")
            #expect(approved.status == 0, "\(approved.standardError)")
        }
        let acted = try bench.tool(["share", "sync", vault.path], password: password, state: "state")
        #expect(acted.status == 0, "\(acted.standardError)")
        #expect(try paths(outbox, Self.containerPassword) == ["Leaving"])
        #expect(try paths(vault, password) == ["In/", "In/Arriving", "Out/", "Out/Leaving"])
        #expect(try KeePassXCCLI.show(vault, password: password, entry: "In/Arriving")["Password"] == "arriving-secret-2")

        // The same vault copied to another folder, another state: its references are not approved there.
        try FileManager.default.createDirectory(at: bench.url("copy"), withIntermediateDirectories: true)
        let copy = bench.url("copy/vault.kdbx")
        try FileManager.default.copyItem(at: vault, to: copy)
        try FileManager.default.copyItem(at: inbox, to: bench.url("copy/in.kdbx"))
        try KeePassXCCLI.run(["add", "-q", "-u", "in", "-p", bench.url("copy/in.kdbx").path, "Later"], password: Self.containerPassword, input: "later-secret-3\n")
        let copyBefore = bytes(copy)
        let copied = try bench.tool(["share", "sync", copy.path], password: password, state: "state-copy")
        #expect(copied.status == 0)
        #expect(copied.standardOutput.components(separatedBy: "not approved on this device").count == 3, "\(copied.standardOutput)")
        #expect(bytes(copy) == copyBefore)
        #expect(bytes(bench.url("copy/out.kdbx")) == nil)
        bench.expectNeverPrinted(Self.containerPassword)
    }

    // MARK: - 4. refusals

    @Test("a container path that is a symlink is refused (exit 6) at add and at sync; the link's target is untouched")
    func symlinkRefused() throws {
        let bench = try Bench()
        let password = "vault-pässword-4"
        let vault = try bench.makeVault("vault.kdbx", password: password, groups: ["Family"], entries: [("Family/Bank", "alice", "bank-secret-4")])
        let notes = bench.url("notes.txt")
        try Data("my own notes\n".utf8).write(to: notes)
        #expect(symlink("notes.txt", bench.url("linked.kdbx").path) == 0)
        let vaultBefore = bytes(vault)

        let atAdd = try bench.tool(["share", "add", vault.path, "/Family", "--export-to", "linked.kdbx", "--container-password-stdin"],
                                   password: password, state: "state", lines: [Self.containerPassword])
        #expect(atAdd.status == 6, "\(atAdd.status): \(atAdd.standardError)")
        #expect(bytes(vault) == vaultBefore, "a refused share add changed the vault")

        // A link planted after the share was added.
        #expect(try bench.tool(["share", "add", vault.path, "/Family", "--export-to", "family.kdbx", "--container-password-stdin"],
                               password: password, state: "state", lines: [Self.containerPassword]).status == 0)
        #expect(symlink("notes.txt", bench.url("family.kdbx").path) == 0)
        let atSync = try bench.tool(["share", "sync", vault.path], password: password, state: "state")
        #expect(atSync.status == 6, "\(atSync.status): \(atSync.standardOutput)\(atSync.standardError)")
        #expect(atSync.standardOutput.contains("link"), "\(atSync.standardOutput)")
        #expect(bytes(notes) == Data("my own notes\n".utf8), "the link's target was written")
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: bench.url("family.kdbx").path)) == "notes.txt")
        bench.expectNeverPrinted(Self.containerPassword)
    }

    @Test("a signed .kdbx.share container is refused at add (exit 2), nothing written")
    func signedContainerRefused() throws {
        let bench = try Bench()
        let password = "vault-pässword-5"
        let vault = try bench.makeVault("vault.kdbx", password: password, groups: ["Family"], entries: [])
        let before = bytes(vault)
        let added = try bench.tool(["share", "add", vault.path, "/Family", "--export-to", "family.kdbx.share", "--container-password-stdin"],
                                   password: password, state: "state", lines: [Self.containerPassword])
        #expect(added.status == 2, "\(added.status): \(added.standardError)")
        #expect(added.standardError.contains(".kdbx.share"))
        #expect(bytes(vault) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: bench.folder.path).sorted() == ["vault.kdbx"])
    }

    @Test("share add of a container that exists with another password: exit 3, vault and container unchanged")
    func otherPasswordRefused() throws {
        let bench = try Bench()
        let password = "vault-pässword-6"
        let vault = try bench.makeVault("vault.kdbx", password: password, groups: ["Family"], entries: [])
        let container = bench.url("family.kdbx")
        try KeePassXCCLI.create(container, password: "someone-elses-container-pw")
        let vaultBefore = bytes(vault), containerBefore = bytes(container)
        let added = try bench.tool(["share", "add", vault.path, "/Family", "--sync-with", "family.kdbx", "--container-password-stdin"],
                                   password: password, state: "state", lines: [Self.containerPassword])
        #expect(added.status == 3, "\(added.status): \(added.standardError)")
        #expect(bytes(vault) == vaultBefore)
        #expect(bytes(container) == containerBefore)
        #expect(try KeeShareReference.read(group: "Family", vault: vault, vaultPassword: password).reference == nil)
        bench.expectNeverPrinted(Self.containerPassword)
    }

    @Test("a container planted with a huge Argon2 cost is refused quickly (exit 6) at add and at sync; nothing written")
    func kdfBombRefused() throws {
        let bench = try Bench()
        let password = "vault-pässword-7"
        let vault = try bench.makeVault("vault.kdbx", password: password, groups: ["Family"], entries: [("Family/Bank", "alice", "bank-secret-7")])
        // A container this tool wrote (KDBX 4, Argon2d), then its cost raised to 2 GiB x 10,000.
        #expect(try bench.tool(["share", "add", vault.path, "/Family", "--sync-with", "family.kdbx", "--container-password-stdin"],
                               password: password, state: "state", lines: [Self.containerPassword]).status == 0)
        #expect(try bench.tool(["share", "sync", vault.path], password: password, state: "state").status == 0)
        let container = bench.url("family.kdbx")
        let bomb = try KDFBomb.made(from: try #require(bytes(container)))

        let planted = bench.url("planted.kdbx")
        try bomb.write(to: planted)
        let vaultBefore = bytes(vault)
        var started = Date()
        let atAdd = try bench.tool(["share", "add", vault.path, "/Family", "--import-from", "planted.kdbx", "--container-password-stdin"],
                                   password: password, state: "state", lines: [Self.containerPassword])
        #expect(Date().timeIntervalSince(started) < 20, "share add took \(Date().timeIntervalSince(started)) s on the planted container")
        #expect(atAdd.status == 6, "\(atAdd.status): \(atAdd.standardError)")
        #expect(bytes(vault) == vaultBefore)

        try bomb.write(to: container)
        started = Date()
        let atSync = try bench.tool(["share", "sync", vault.path], password: password, state: "state")
        #expect(Date().timeIntervalSince(started) < 20, "share sync took \(Date().timeIntervalSince(started)) s on the planted container")
        #expect(atSync.status == 6, "\(atSync.status): \(atSync.standardOutput)\(atSync.standardError)")
        #expect(bytes(container) == bomb, "the planted container was overwritten")
        #expect(bytes(vault) == vaultBefore)
        bench.expectNeverPrinted(Self.containerPassword)
    }

    // MARK: - 5. a deletion in the container never destroys an unseen edit

    @Test("an entry edited here after the last exchange and deleted in the container by another writer (keepassxc-cli rm, a tombstone) keeps the edit")
    func deletionDoesNotDestroyUnseenEdit() throws {
        let bench = try Bench()
        let password = "vault-pässword-8"
        let vault = try bench.makeVault("vault.kdbx", password: password, groups: ["Team"],
                                        entries: [("Team/Server", "ops", "server-secret-8"), ("Team/Other", "x", "other-secret-8")])
        let container = bench.url("team.kdbx")
        #expect(try bench.tool(["share", "add", vault.path, "/Team", "--sync-with", "team.kdbx", "--container-password-stdin"],
                               password: password, state: "state", lines: [Self.containerPassword]).status == 0)
        #expect(try bench.tool(["share", "sync", vault.path], password: password, state: "state").status == 0)
        #expect(try paths(container, Self.containerPassword) == ["Other", "Server"])

        // Here: Server edited. Then (a second later) the other writer deletes Server from the container for good.
        try KeePassXCCLI.run(["edit", "-q", "-u", "edited-here", vault.path, "Team/Server"], password: password)
        waitForNextClockSecond()
        // rm moves to the recycle bin where there is one, and deletes for good from there (or without one).
        for _ in 0..<2 {
            guard let path = try paths(container, Self.containerPassword).first(where: { $0.hasSuffix("Server") }) else { break }
            try KeePassXCCLI.run(["rm", "-q", container.path, path], password: Self.containerPassword)
        }
        let exported = try KeePassXCCLI.run(["export", "-q", "-f", "xml", container.path], password: Self.containerPassword)
        #expect(exported.contains("<DeletedObject>"), "the container carries no tombstone")
        #expect(try paths(container, Self.containerPassword) == ["Other"])

        let synced = try bench.tool(["share", "sync", vault.path], password: password, state: "state")
        #expect(synced.status == 0, "\(synced.standardOutput)\(synced.standardError)")
        let listed = try paths(vault, password)
        let server = try #require(listed.first { $0.hasSuffix("/Server") }, "the edited entry is gone: \(listed)")
        let shown = try KeePassXCCLI.show(vault, password: password, entry: server)
        #expect(shown["UserName"] == "edited-here")
        #expect(shown["Password"] == "server-secret-8")
        bench.expectNeverPrinted(Self.containerPassword)
    }

    @Test("--container-password-from keyring: the container's password stored with `keyring store` (a real Secret Service) goes into the reference, never onto a command line")
    func containerPasswordFromKeyring() throws {
        let session = try SecretServiceSession()
        defer { session.stop() }
        let bench = try Bench()
        let vaultPassword = "vault-pässword-K"
        let vault = try bench.makeVault("vault.kdbx", password: vaultPassword, groups: ["Family"], entries: [("Family/Bank", "me", "bank-secret")])
        let container = try bench.makeVault("family.kdbx", password: Self.containerPassword, groups: [], entries: [("Streaming", "fam", "tv-secret")])
        let stored = try session.tool(["keyring", "store", container.path, "--password-stdin"], input: Self.containerPassword + "\n")
        #expect(stored.status == 0, "\(stored.standardError)")
        let state = bench.url("state").path
        let added = try session.tool(["share", "add", vault.path, "/Family", "--sync-with", "family.kdbx", "--container-password-from", "keyring",
                                      "--password-stdin", "--state-dir", state], input: vaultPassword + "\n")
        #expect(added.status == 0, "\(added.standardError)")
        let synced = try session.tool(["share", "sync", vault.path, "--password-stdin", "--state-dir", state], input: vaultPassword + "\n")
        #expect(synced.status == 0, "\(synced.standardError)")
        #expect(try KeePassXCCLI.paths(vault, password: vaultPassword).contains("Family/Streaming"), "the container was not imported")
        #expect(try KeePassXCCLI.paths(container, password: Self.containerPassword).contains("Bank"), "the group was not exported")
        for outcome in [stored, added, synced] {
            #expect(!(outcome.standardOutput + outcome.standardError).contains(Self.containerPassword))
        }
        // Without a stored password for that database: exit 3, nothing written.
        let other = try bench.makeVault("other.kdbx", password: "another-pass", groups: [], entries: [])
        let before = bytes(vault)
        let refused = try session.tool(["share", "add", vault.path, "/Family", "--import-from", "other.kdbx", "--container-password-from", "keyring",
                                        "--password-stdin", "--state-dir", state], input: vaultPassword + "\n")
        #expect(refused.status == 3, "\(refused.standardError)")
        #expect(bytes(vault) == before)
        _ = other
    }
}

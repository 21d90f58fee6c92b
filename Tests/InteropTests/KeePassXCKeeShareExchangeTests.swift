import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Shared groups exchanged between the real KeePassXC 2.7.4 GUI (`KeePassXCWindow`, Xvfb) and the
/// built `mypass-sync share` commands: vaults made by keepassxc-cli (from KeePass XML where an entry
/// needs custom fields and history), references set by pykeepass, results read back by keepassxc-cli.
/// Serialized like the harness: two GUIs at once on two cores only make each slower. A missing
/// program fails the test (run scripts/setup); nothing is skipped.
@Suite("KeeShare exchanged with the real KeePassXC GUI: its containers imported here, ours imported there, its deletions",
       .serialized, .timeLimit(.minutes(10)))
struct KeePassXCKeeShareExchangeTests {
    static let keepassxcPassword = "keepassxc-vault-pw"
    static let ourPassword = "our-vault-pässword"
    static let sharePassword = "share-pässword-G7"

    /// A scratch folder with `keepassxc/` (KeePassXC's vault and containers) and `ours/`, removed when `body` ends.
    private func withFolder(_ body: (URL) throws -> Void) throws {
        let missing = KeePassXCWindow.missingPrograms()
        guard missing.isEmpty else {
            Issue.record("these tests need \(missing.joined(separator: ", ")): run scripts/setup")
            return
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mypass-keeshare-exchange-\(UUID().uuidString)")
        for name in ["keepassxc", "ours"] {
            try FileManager.default.createDirectory(at: folder.appendingPathComponent(name), withIntermediateDirectories: true)
        }
        defer { try? FileManager.default.removeItem(at: folder) }
        try body(folder)
    }

    // MARK: - mypass-sync

    /// The `mypass-sync` built beside this test bundle.
    private static func binary() throws -> URL {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("mypass-sync")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        throw ReferenceTools.Failure(description: "no mypass-sync binary beside \(CommandLine.arguments[0]): swift build --build-tests")
    }

    /// `mypass-sync ARGUMENTS --password-stdin --state-dir STATE` with our vault's password and `lines`
    /// on standard input; fails the test when it does not exit 0 or prints the share password.
    @discardableResult
    private func share(_ arguments: [String], state: URL, lines: [String] = [], sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let outcome = try ProcessRunner.run(try Self.binary(), ["share"] + arguments + ["--password-stdin", "--state-dir", state.path],
                                            input: Data(([Self.ourPassword] + lines).map { $0 + "\n" }.joined().utf8),
                                            environment: ["XDG_STATE_HOME": state.path], timeout: 120)
        #expect(outcome.status == 0, "share \(arguments.first ?? "") exited \(outcome.status): \(outcome.output)\(outcome.standardError)",
                sourceLocation: sourceLocation)
        #expect(!(outcome.output + outcome.standardError).contains(Self.sharePassword), "share \(arguments.first ?? "") printed the share password",
                sourceLocation: sourceLocation)
        return outcome.output
    }

    // MARK: - What keepassxc-cli sees

    /// The entries keepassxc-cli exports from `vault` in the group `group` ("/" for the root), by UUID.
    private func entries(_ vault: URL, _ password: String, group: String) throws -> [String: FixtureVault.Entry] {
        let view = try ReferenceTools.view(.keepassxc, path: vault, password: password, keyFile: nil)
        return Dictionary(uniqueKeysWithValues: view.entries.filter { $0.group == group && !$0.inRecycleBin }.map { ($0.uuid, $0) })
    }

    /// Expects the entries of `got` to be those of `expected` field for field (title, user name,
    /// password, URL, notes, custom fields and which are protected, attachment names, history count).
    private func expectSameEntries(_ got: [String: FixtureVault.Entry], _ expected: [String: FixtureVault.Entry], _ what: String,
                                   sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(Set(got.keys) == Set(expected.keys), "\(what): entries \(got.values.map(\.title).sorted()) vs \(expected.values.map(\.title).sorted())",
                sourceLocation: sourceLocation)
        for (uuid, want) in expected {
            guard let have = got[uuid] else { continue }
            #expect(have.title == want.title, "\(what)", sourceLocation: sourceLocation)
            #expect(have.username == want.username, "\(what): \(want.title)", sourceLocation: sourceLocation)
            #expect(have.password == want.password, "\(what): \(want.title)'s password differs", sourceLocation: sourceLocation)
            #expect(have.url == want.url, "\(what): \(want.title)", sourceLocation: sourceLocation)
            #expect(have.notes == want.notes, "\(what): \(want.title)", sourceLocation: sourceLocation)
            #expect(have.fields == want.fields, "\(what): \(want.title)'s custom fields differ (\(have.fields.keys.sorted()) vs \(want.fields.keys.sorted()))",
                    sourceLocation: sourceLocation)
            #expect(have.protected == want.protected, "\(what): \(want.title) protected \(have.protected) vs \(want.protected)", sourceLocation: sourceLocation)
            #expect(have.attachmentNames == want.attachmentNames, "\(what): \(want.title)", sourceLocation: sourceLocation)
            #expect(have.historyCount == want.historyCount, "\(what): \(want.title) history \(have.historyCount) vs \(want.historyCount)",
                    sourceLocation: sourceLocation)
        }
    }

    /// The bytes of the attachment `name` of the entry at `entry` in `vault`, as keepassxc-cli exports them.
    private func attachment(_ vault: URL, _ password: String, entry: String, name: String) throws -> Data {
        let file = vault.deletingLastPathComponent().appendingPathComponent(".attachment-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        try KeePassXCCLI.run(["attachment-export", "-q", vault.path, entry, name, file.path], password: password)
        return try Data(contentsOf: file)
    }

    /// Bytes no text encoding would keep: every byte value, twice, and a NUL run.
    private static let attachmentBytes = Data((0..<512).map { UInt8($0 % 256) } + [UInt8](repeating: 0, count: 64) + Array("end\n".utf8))

    /// The entries of a shared group: custom fields (one protected), protected values, history items.
    private static func sharedEntries() -> [KeePassXMLVault.Entry] {
        typealias Field = KeePassXMLVault.Field
        return [
            KeePassXMLVault.Entry(fields: [
                Field("Title", "Alpha"), Field("UserName", "alice"), Field("Password", "alpha-now-Ä1", protected: true),
                Field("URL", "https://alpha.example/login"), Field("Notes", "first line\nsecond line & <more>"),
                Field("PIN", "4711-pin", protected: true), Field("Account", "ACC-0001"),
            ], modified: "2026-03-01T10:00:00Z", history: [
                ([Field("Title", "Alpha"), Field("UserName", "alice"), Field("Password", "alpha-old-1", protected: true)], "2026-01-05T10:00:00Z"),
                ([Field("Title", "Alpha"), Field("UserName", "alice"), Field("Password", "alpha-old-2", protected: true),
                  Field("PIN", "0000-pin", protected: true)], "2026-02-05T10:00:00Z"),
            ]),
            KeePassXMLVault.Entry(fields: [
                Field("Title", "Beta"), Field("UserName", "bob"), Field("Password", "beta-now-2", protected: true),
                Field("Recovery code", "R-ECO-VERY", protected: true), Field("Plain note", "visible"),
            ], modified: "2026-03-02T10:00:00Z", history: [
                ([Field("Title", "Beta"), Field("UserName", "bob"), Field("Password", "beta-old", protected: true)], "2026-01-07T10:00:00Z"),
            ]),
            KeePassXMLVault.Entry(fields: [Field("Title", "Gamma"), Field("UserName", "carol"), Field("Password", "", protected: true)]),
        ]
    }

    // MARK: - The tests

    @Test("a container KeePassXC exported is imported here (share add --import-from, share sync): every entry, field, protected flag, attachment and history item arrives")
    func keepassxcContainerImportedHere() throws {
        try withFolder { folder in
            let keepassxcVault = folder.appendingPathComponent("keepassxc/vault.kdbx")
            let container = folder.appendingPathComponent("keepassxc/shared.kdbx")
            let attachmentFile = folder.appendingPathComponent("contract.bin")
            try Self.attachmentBytes.write(to: attachmentFile)
            try KeePassXMLVault.make(keepassxcVault, password: Self.keepassxcPassword, groups: [
                KeePassXMLVault.Group(name: "Shared", entries: Self.sharedEntries()),
                KeePassXMLVault.Group(name: "Private", entries: [KeePassXMLVault.Entry(fields: [.init("Title", "Hidden"), .init("Password", "hidden-secret", protected: true)])]),
            ])
            try KeePassXCCLI.run(["attachment-import", "-q", keepassxcVault.path, "Shared/Alpha", "contract.bin", attachmentFile.path],
                                 password: Self.keepassxcPassword)
            try KeeShareReference.set(.exporting, path: "shared.kdbx", password: Self.sharePassword, group: "Shared",
                                      vault: keepassxcVault, vaultPassword: Self.keepassxcPassword)

            let window = try KeePassXCWindow(vault: keepassxcVault, password: Self.keepassxcPassword)
            let exported = try window.exportShares(to: container)
            let status = try window.close()
            #expect(status == 0, "KeePassXC exited \(status): \(window.log)")
            print("KeePassXC exported the container \(exported) s after Sort A-Z (window after \(window.startupSeconds) s, \(window.quitRequests) quit request(s), \(window.startAttempts) start(s))")

            let fromKeePassXC = try entries(container, Self.sharePassword, group: "/")
            #expect(fromKeePassXC.values.map(\.title).sorted() == ["Alpha", "Beta", "Gamma"])
            let alphaThere = try #require(fromKeePassXC.values.first { $0.title == "Alpha" })
            #expect(alphaThere.historyCount >= 2 && alphaThere.attachmentNames == ["contract.bin"], "KeePassXC's container: \(alphaThere)")

            // Here: a vault of our own with a group to import into.
            let ours = folder.appendingPathComponent("ours/vault.kdbx"), state = folder.appendingPathComponent("ours/state")
            try KeePassXCCLI.create(ours, password: Self.ourPassword)
            try KeePassXCCLI.run(["mkdir", "-q", ours.path, "From KeePassXC"], password: Self.ourPassword)
            try KeePassXCCLI.run(["add", "-q", "-u", "me", ours.path, "Mine"], password: Self.ourPassword)
            try share(["add", ours.path, "/From KeePassXC", "--import-from", "../keepassxc/shared.kdbx", "--container-password-stdin"],
                      state: state, lines: [Self.sharePassword])
            let containerBefore = try Data(contentsOf: container)
            let synced = try share(["sync", ours.path], state: state)
            #expect(synced.contains("/From KeePassXC: imported"), "\(synced)")
            #expect(try Data(contentsOf: container) == containerBefore, "an import-only share wrote the container")

            expectSameEntries(try entries(ours, Self.ourPassword, group: "/From KeePassXC"), fromKeePassXC, "imported here")
            #expect(try attachment(ours, Self.ourPassword, entry: "From KeePassXC/Alpha", name: "contract.bin") == Self.attachmentBytes)
            let paths = try KeePassXCCLI.paths(ours, password: Self.ourPassword).sorted()
            #expect(paths == ["From KeePassXC/", "From KeePassXC/Alpha", "From KeePassXC/Beta", "From KeePassXC/Gamma", "Mine"], "\(paths)")

            // Once more: in step, nothing written.
            let oursBefore = try Data(contentsOf: ours)
            #expect(try share(["sync", ours.path], state: state).contains("/From KeePassXC: in step"))
            #expect(try Data(contentsOf: ours) == oursBefore)
        }
    }

    @Test("a container exported here (share add --export-to, share sync) is imported by KeePassXC intact: fields, protected flags, attachment bytes, history counts")
    func ourContainerImportedByKeePassXC() throws {
        try withFolder { folder in
            let ours = folder.appendingPathComponent("ours/vault.kdbx"), state = folder.appendingPathComponent("ours/state")
            let container = folder.appendingPathComponent("keepassxc/family.kdbx")
            let attachmentFile = folder.appendingPathComponent("contract.bin")
            try Self.attachmentBytes.write(to: attachmentFile)
            try KeePassXMLVault.make(ours, password: Self.ourPassword, groups: [
                KeePassXMLVault.Group(name: "Family", entries: Self.sharedEntries()),
                KeePassXMLVault.Group(name: "Private", entries: [KeePassXMLVault.Entry(fields: [.init("Title", "Hidden"), .init("Password", "hidden-secret", protected: true)])]),
            ])
            try KeePassXCCLI.run(["attachment-import", "-q", ours.path, "Family/Beta", "contract.bin", attachmentFile.path], password: Self.ourPassword)
            try share(["add", ours.path, "/Family", "--export-to", container.path, "--container-password-stdin"], state: state, lines: [Self.sharePassword])
            #expect(try share(["sync", ours.path], state: state).contains("/Family: wrote the container"))
            let fromHere = try entries(ours, Self.ourPassword, group: "/Family")
            #expect(fromHere.count == 3)
            expectSameEntries(try entries(container, Self.sharePassword, group: "/"), fromHere, "our container")

            // KeePassXC: a vault with an import reference to our container, opened in the window.
            let keepassxcVault = folder.appendingPathComponent("keepassxc/vault.kdbx")
            try KeePassXCCLI.create(keepassxcVault, password: Self.keepassxcPassword)
            try KeePassXCCLI.run(["mkdir", "-q", keepassxcVault.path, "From us"], password: Self.keepassxcPassword)
            try KeeShareReference.set(.importing, path: "family.kdbx", password: Self.sharePassword, group: "From us",
                                      vault: keepassxcVault, vaultPassword: Self.keepassxcPassword)
            let window = try KeePassXCWindow(vault: keepassxcVault, password: Self.keepassxcPassword)
            let imported = try window.waitForVault("Alpha, Beta and Gamma imported into From us") {
                Set(try KeePassXCCLI.paths(keepassxcVault, password: Self.keepassxcPassword))
                    .isSuperset(of: ["From us/Alpha", "From us/Beta", "From us/Gamma"])
            }
            let status = try window.close()
            #expect(status == 0, "KeePassXC exited \(status): \(window.log)")
            print("KeePassXC imported our container \(imported) s after its window showed (\(window.startupSeconds) s, \(window.quitRequests) quit request(s), \(window.startAttempts) start(s))")

            expectSameEntries(try entries(keepassxcVault, Self.keepassxcPassword, group: "/From us"), fromHere, "imported by KeePassXC")
            #expect(try attachment(keepassxcVault, Self.keepassxcPassword, entry: "From us/Beta", name: "contract.bin") == Self.attachmentBytes)
            #expect(try KeePassXCCLI.paths(keepassxcVault, password: Self.keepassxcPassword).sorted()
                == ["From us/", "From us/Alpha", "From us/Beta", "From us/Gamma"])
        }
    }

    @Test("KeePassXC deletes an entry for good and exports (a tombstone in the container) after we edited it since the last exchange: share sync keeps our edit")
    func keepassxcDeletionKeepsUnseenEdit() throws {
        try withFolder { folder in
            let keepassxcVault = folder.appendingPathComponent("keepassxc/vault.kdbx")
            let container = folder.appendingPathComponent("keepassxc/shared.kdbx")
            try KeePassXCCLI.create(keepassxcVault, password: Self.keepassxcPassword)
            try KeePassXCCLI.run(["mkdir", "-q", keepassxcVault.path, "Shared"], password: Self.keepassxcPassword)
            try KeePassXCCLI.run(["add", "-q", "-u", "ops", "-p", keepassxcVault.path, "Shared/Server"], password: Self.keepassxcPassword,
                                 input: "server-secret-1\n")
            try KeePassXCCLI.run(["add", "-q", "-u", "x", "-p", keepassxcVault.path, "Shared/Other"], password: Self.keepassxcPassword,
                                 input: "other-secret-2\n")
            try KeeShareReference.set(.exporting, path: "shared.kdbx", password: Self.sharePassword, group: "Shared",
                                      vault: keepassxcVault, vaultPassword: Self.keepassxcPassword)
            let first = try KeePassXCWindow(vault: keepassxcVault, password: Self.keepassxcPassword)
            try first.exportShares(to: container)
            #expect(try first.close() == 0, "\(first.log)")
            print("KeePassXC's first export: window after \(first.startupSeconds) s, \(first.quitRequests) quit request(s), \(first.startAttempts) start(s)")
            let serverUUID = try #require(try KeePassXCCLI.show(container, password: Self.sharePassword, entry: "Server")["Uuid"])

            // Here: imported, then Server edited.
            let ours = folder.appendingPathComponent("ours/vault.kdbx"), state = folder.appendingPathComponent("ours/state")
            try KeePassXCCLI.create(ours, password: Self.ourPassword)
            try KeePassXCCLI.run(["mkdir", "-q", ours.path, "Team"], password: Self.ourPassword)
            try share(["add", ours.path, "/Team", "--import-from", container.path, "--container-password-stdin"], state: state, lines: [Self.sharePassword])
            try share(["sync", ours.path], state: state)
            #expect(try KeePassXCCLI.show(ours, password: Self.ourPassword, entry: "Team/Server")["Uuid"] == serverUUID)
            try KeePassXCCLI.run(["edit", "-q", "-u", "edited-here", ours.path, "Team/Server"], password: Self.ourPassword)

            // Later, in KeePassXC: Server deleted (to the recycle bin, then from it for good), the group exported.
            waitForNextClockSecond()
            try KeePassXCCLI.run(["rm", "-q", keepassxcVault.path, "Shared/Server"], password: Self.keepassxcPassword)
            let binned = try #require(try KeePassXCCLI.paths(keepassxcVault, password: Self.keepassxcPassword).first { $0.hasSuffix("/Server") })
            try KeePassXCCLI.run(["rm", "-q", keepassxcVault.path, binned], password: Self.keepassxcPassword)
            let second = try KeePassXCWindow(vault: keepassxcVault, password: Self.keepassxcPassword)
            try second.exportShares(to: container)
            #expect(try second.close() == 0, "\(second.log)")
            print("KeePassXC's export with the tombstone: window after \(second.startupSeconds) s, \(second.quitRequests) quit request(s), \(second.startAttempts) start(s)")
            #expect(try KeePassXCCLI.paths(container, password: Self.sharePassword) == ["Other"])
            let hex = serverUUID.trimmingCharacters(in: CharacterSet(charactersIn: "{}")).replacingOccurrences(of: "-", with: "")
            let tombstone = Data(stride(from: 0, to: hex.count, by: 2).map { UInt8(hex.dropFirst($0).prefix(2), radix: 16) ?? 0 }).base64EncodedString()
            let exported = try KeePassXCCLI.run(["export", "-q", "-f", "xml", container.path], password: Self.sharePassword)
            #expect(exported.contains("<UUID>\(tombstone)</UUID>"), "KeePassXC's container carries no tombstone for Server")

            let synced = try share(["sync", ours.path], state: state)
            let paths = try KeePassXCCLI.paths(ours, password: Self.ourPassword)
            let server = try #require(paths.first { $0.hasSuffix("/Server") }, "our edited Server is gone: \(paths); sync said \(synced)")
            let shown = try KeePassXCCLI.show(ours, password: Self.ourPassword, entry: server)
            #expect(shown["UserName"] == "edited-here")
            #expect(shown["Password"] == "server-secret-1")
            #expect(shown["Uuid"] == serverUUID)
            #expect(paths.contains("Team/Other"))
        }
    }
}

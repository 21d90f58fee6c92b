import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The KeePassXC GUI driver (`KeePassXCWindow`) against the real KeePassXC 2.7.4 under Xvfb, with
/// no code of ours in the loop: vaults and containers made by keepassxc-cli, references set by
/// pykeepass, results read back by keepassxc-cli. Serialized: two GUIs at once on two cores only
/// make each slower. Each step waits for its event with a deadline; the timings are printed.
@Suite("KeePassXC GUI harness: KeeShare export and import by the real program", .serialized, .timeLimit(.minutes(10)))
struct KeePassXCKeeShareHarnessTests {
    static let vaultPassword = "vault-pw"
    static let sharePassword = "share-pw"

    /// A scratch folder removed when `body` ends.
    private func withFolder(_ body: (URL) throws -> Void) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mypass-keeshare-gui-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try body(folder)
    }

    @Test("export: KeePassXC writes the shared group to its container on save; keepassxc-cli reads the entries with the reference password")
    func exportWritesContainer() throws {
        try withFolder { folder in
            let vault = folder.appendingPathComponent("vault.kdbx"), container = folder.appendingPathComponent("shared.kdbx")
            try KeePassXCCLI.create(vault, password: Self.vaultPassword)
            try KeePassXCCLI.run(["mkdir", "-q", vault.path, "Shared"], password: Self.vaultPassword)
            try KeePassXCCLI.run(["add", "-q", "-u", "alice", "--url", "https://alpha.example", "-p", vault.path, "Shared/Alpha"],
                                 password: Self.vaultPassword, input: "alpha-secret\n")
            try KeePassXCCLI.run(["add", "-q", "-u", "bob", "-p", vault.path, "Shared/Beta"], password: Self.vaultPassword, input: "beta-secret\n")
            try KeePassXCCLI.run(["add", "-q", "-u", "me", vault.path, "Private"], password: Self.vaultPassword)
            try KeeShareReference.set(.exporting, path: "shared.kdbx", password: Self.sharePassword, group: "Shared",
                                      vault: vault, vaultPassword: Self.vaultPassword)
            let written = try #require(try KeeShareReference.read(group: "Shared", vault: vault, vaultPassword: Self.vaultPassword).reference)
            #expect(FileStamp(container) == nil)

            let window = try KeePassXCWindow(vault: vault, password: Self.vaultPassword)
            let exported = try window.exportShares(to: container)
            let closeStarted = Date()
            let status = try window.close()
            print("KeePassXC GUI export: window after \(window.startupSeconds) s, container \(exported) s after Sort A-Z, "
                + "quit in \(Date().timeIntervalSince(closeStarted)) s")
            #expect(status == 0, "KeePassXC exited \(status): \(window.log)")

            // The container: the shared group's entries at its root, nothing else of the vault.
            #expect(try KeePassXCCLI.paths(container, password: Self.sharePassword).sorted() == ["Alpha", "Beta"])
            let alpha = try KeePassXCCLI.show(container, password: Self.sharePassword, entry: "Alpha")
            #expect(alpha["UserName"] == "alice")
            #expect(alpha["Password"] == "alpha-secret")
            #expect(alpha["URL"] == "https://alpha.example")
            #expect(try KeePassXCCLI.show(container, password: Self.sharePassword, entry: "Beta")["Password"] == "beta-secret")
            #expect(try KeePassXCCLI.run(["db-info", "-q", container.path], password: Self.sharePassword).contains("Name: Shared"))
            let mode = try FileManager.default.attributesOfItem(atPath: container.path)[.posixPermissions] as? Int
            #expect(mode == 0o600)

            // KeePassXC keeps the reference it read byte for byte, and the vault's content.
            let after = try KeeShareReference.read(group: "Shared", vault: vault, vaultPassword: Self.vaultPassword)
            #expect(after.reference == written)
            #expect(try KeePassXCCLI.paths(vault, password: Self.vaultPassword).sorted() == ["Private", "Shared/", "Shared/Alpha", "Shared/Beta"])
        }
    }

    @Test("import: KeePassXC merges a container into the group on open and again when the container is replaced; the vault on disk shows them")
    func importFillsVault() throws {
        try withFolder { folder in
            let vault = folder.appendingPathComponent("vault.kdbx"), container = folder.appendingPathComponent("shared.kdbx")
            let gamma = ContainerEntry(uuid: try #require(UUID(uuidString: "10111213-1415-1617-1819-1a1b1c1d1e1f")),
                                       title: "Gamma", username: "carol", password: "gamma-secret")
            let delta = ContainerEntry(uuid: try #require(UUID(uuidString: "20212223-2425-2627-2829-2a2b2c2d2e2f")),
                                       title: "Delta", username: "dave", password: "delta-secret")
            let epsilon = ContainerEntry(uuid: try #require(UUID(uuidString: "30313233-3435-3637-3839-3a3b3c3d3e3f")),
                                       title: "Epsilon", username: "eve", password: "epsilon-secret")
            try makeContainer(container, root: "Shared", entries: [gamma, delta], in: folder)
            try KeePassXCCLI.create(vault, password: Self.vaultPassword)
            try KeePassXCCLI.run(["mkdir", "-q", vault.path, "Shared"], password: Self.vaultPassword)
            try KeePassXCCLI.run(["add", "-q", "-u", "me", vault.path, "Shared/Local"], password: Self.vaultPassword)
            try KeeShareReference.set(.importing, path: "shared.kdbx", password: Self.sharePassword, group: "Shared",
                                      vault: vault, vaultPassword: Self.vaultPassword)

            let window = try KeePassXCWindow(vault: vault, password: Self.vaultPassword)
            let onOpen = try window.waitForVault("Gamma and Delta imported into Shared") {
                Set(try KeePassXCCLI.paths(vault, password: Self.vaultPassword)).isSuperset(of: ["Shared/Gamma", "Shared/Delta"])
            }
            // A new container moved over the old one (as a sync engine delivers it): KeePassXC's watcher.
            try makeContainer(container, root: "Shared", entries: [gamma, delta, epsilon], in: folder)
            let onChange = try window.waitForVault("Epsilon imported into Shared") {
                try KeePassXCCLI.paths(vault, password: Self.vaultPassword).contains("Shared/Epsilon")
            }
            let status = try window.close()
            print("KeePassXC GUI import: window after \(window.startupSeconds) s, vault saved with the import \(onOpen) s later; "
                + "replaced container imported and saved in \(onChange) s")
            #expect(status == 0, "KeePassXC exited \(status): \(window.log)")

            #expect(try KeePassXCCLI.paths(vault, password: Self.vaultPassword).sorted()
                == ["Shared/", "Shared/Delta", "Shared/Epsilon", "Shared/Gamma", "Shared/Local"])
            let shown = try KeePassXCCLI.show(vault, password: Self.vaultPassword, entry: "Shared/Gamma")
            #expect(shown["UserName"] == "carol")
            #expect(shown["Password"] == "gamma-secret")
            #expect(shown["Uuid"] == "{\(gamma.uuid.uuidString.lowercased())}")
        }
    }

    @Test("a step that does not happen fails within its deadline, saying what KeePassXC shows, and leaves no KeePassXC or Xvfb running")
    func failureIsBoundedAndCleansUp() throws {
        try withFolder { folder in
            let vault = folder.appendingPathComponent("vault.kdbx")
            try KeePassXCCLI.create(vault, password: Self.vaultPassword)
            let started = Date()
            let failure = #expect(throws: KeePassXCWindow.Failure.self) {
                try KeePassXCWindow(vault: vault, password: "not the password", timeout: 10)
            }
            #expect(Date().timeIntervalSince(started) < 40)
            #expect(failure?.description.contains("vault.kdbx [Locked] - KeePassXC") == true, "\(failure.map { "\($0)" } ?? "")")
            #expect(try processes(mentioning: vault.path).isEmpty)
            // The window's own Xvfb (its environment names this vault; other suites' servers run beside it).
            #expect(try processes(mentioning: "/usr/bin/Xvfb -displayfd").filter { entry in
                let pid = entry.prefix { $0 != ":" }
                let environment = FileManager.default.contents(atPath: "/proc/\(pid)/environ").map { String(decoding: $0, as: UTF8.self) } ?? ""
                return environment.contains("MYPASS_TEST_OWNER=\(vault.path)")
            }.isEmpty)
        }
    }

    /// "PID: COMMAND LINE" of each running process whose command line contains `text`.
    private func processes(mentioning text: String) throws -> Set<String> {
        Set(try FileManager.default.contentsOfDirectory(atPath: "/proc").filter { $0.allSatisfy(\.isNumber) }.compactMap { pid in
            guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return nil }
            let line = String(decoding: data, as: UTF8.self).replacingOccurrences(of: "\u{0}", with: " ")
            return line.contains(text) ? "\(pid): \(line)" : nil
        })
    }

    // MARK: - Containers made by keepassxc-cli

    struct ContainerEntry {
        let uuid: UUID
        let title: String
        let username: String
        let password: String
    }

    /// A plain container at `path` as `keepassxc-cli import` makes it from KeePass XML: the root group
    /// named `root` holding `entries`, the reference password as its only key. Written beside it and
    /// moved into place with one rename, so KeePassXC never sees half a file.
    private func makeContainer(_ path: URL, root: String, entries: [ContainerEntry], in folder: URL) throws {
        func base64(_ uuid: UUID) -> String { withUnsafeBytes(of: uuid.uuid) { Data($0).base64EncodedString() } }
        func escaped(_ text: String) -> String {
            text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
        }
        let time = "2026-01-01T00:00:00Z"
        let times = "<Times><LastModificationTime>\(time)</LastModificationTime><CreationTime>\(time)</CreationTime>"
            + "<LastAccessTime>\(time)</LastAccessTime><ExpiryTime>\(time)</ExpiryTime><Expires>False</Expires>"
            + "<UsageCount>0</UsageCount><LocationChanged>\(time)</LocationChanged></Times>"
        let entryXML = entries.map { entry in
            "<Entry><UUID>\(base64(entry.uuid))</UUID>\(times)"
                + "<String><Key>Title</Key><Value>\(escaped(entry.title))</Value></String>"
                + "<String><Key>UserName</Key><Value>\(escaped(entry.username))</Value></String>"
                + "<String><Key>Password</Key><Value ProtectInMemory=\"True\">\(escaped(entry.password))</Value></String></Entry>"
        }.joined()
        let xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><KeePassFile><Meta><Generator>mypass-sync tests</Generator>"
            + "<DatabaseName>\(escaped(root))</DatabaseName></Meta><Root><Group><UUID>\(base64(UUID()))</UUID>"
            + "<Name>\(escaped(root))</Name>\(times)\(entryXML)</Group></Root></KeePassFile>"
        let source = folder.appendingPathComponent("container-\(UUID().uuidString).xml")
        let made = folder.appendingPathComponent("container-\(UUID().uuidString).kdbx")
        defer { try? FileManager.default.removeItem(at: source) }
        try Data(xml.utf8).write(to: source)
        try KeePassXCCLI.run(["import", "-q", "-p", "-t", "100", source.path, made.path], password: Self.sharePassword,
                             input: Self.sharePassword + "\n")
        #expect(rename(made.path, path.path) == 0)
        #expect(try KeePassXCCLI.paths(path, password: Self.sharePassword).sorted() == entries.map(\.title).sorted())
    }
}

import Foundation
import KDBXFormat
import MyPassCore
import MyPassMerge
import Testing
import TestSupport

/// Merge scenarios made with the real KeePassXC: two copies of one base edited with keepassxc-cli,
/// merged by us, the result read back by keepassxc-cli and pykeepass.
@Suite("Merging copies edited with keepassxc-cli", .serialized)
struct KeePassXCEditScenarioTests {
    static let fixture = "kxc-3.1-aes-aeskdf-gzip.kdbx"

    /// Runs keepassxc-cli with the fixture password (and `extraInput` lines) on standard input.
    static func keepassxc(_ arguments: [String], password: String, extraInput: String = "") throws {
        let outcome = try ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/env"), ["keepassxc-cli"] + arguments,
            input: Data((password + "\n" + extraInput).utf8), environment: ["QT_QPA_PLATFORM": "offscreen"])
        guard outcome.status == 0 else { throw ReferenceTools.Failure(description: "keepassxc-cli \(arguments[0]): \(outcome.standardError)") }
    }

    struct Replicas {
        let directory: URL
        let key: CompositeKey
        let password: String
        let base: OpenedVault
        func open(_ name: String) throws -> OpenedVault {
            try KDBXReader.open(Data(contentsOf: directory.appendingPathComponent(name)), key: key)
        }
    }

    /// Copies the fixture to base/laptop/phone, lets `edit` change laptop and phone with keepassxc-cli.
    static func withReplicas(_ body: (Replicas) throws -> Void, edit: (URL, URL, String) throws -> Void) throws {
        let fixture = try FixtureVault.named(Self.fixture)
        let password = try #require(fixture.credentials.password)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("mypass-kxc-merge-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        for name in ["base.kdbx", "laptop.kdbx", "phone.kdbx"] {
            try FileManager.default.copyItem(at: fixture.path, to: directory.appendingPathComponent(name))
        }
        try edit(directory.appendingPathComponent("laptop.kdbx"), directory.appendingPathComponent("phone.kdbx"), password)
        let key = try CompositeKey(password: password)
        let base = try KDBXReader.open(Data(contentsOf: directory.appendingPathComponent("base.kdbx")), key: key)
        try body(Replicas(directory: directory, key: key, password: password, base: base))
    }

    @Test("username on the laptop, password on the phone: both current, and both tools agree")
    func sameEntryDifferentFields() throws {
        try Self.withReplicas({ replicas in
            let laptop = try replicas.open("laptop.kdbx"), phone = try replicas.open("phone.kdbx")
            for base in [replicas.base.vault, nil] as [Vault?] {
                let result = try VaultMerger.merge(base: base, local: laptop.vault, remote: phone.vault)
                let view = VaultView(result.vault)
                let github = try #require(view.entries.values.first { $0.title == "GitHub" })
                #expect(github.username == "alice-laptop")
                #expect(github.password == "phone-pw")
                #expect(github.notes == "two\nlines")
            }
            let result = try VaultMerger.merge(base: replicas.base.vault, local: laptop.vault, remote: phone.vault)
            let (file, _) = try KDBXWriter.serialize(result.vault, settings: laptop.settings, key: replicas.key, cachedKey: laptop.derivedKey)
            let merged = replicas.directory.appendingPathComponent("merged.kdbx")
            try file.write(to: merged)
            for tool in ReferenceTools.Tool.allCases {
                let theirs = try ReferenceTools.view(tool, path: merged, password: replicas.password, keyFile: nil)
                let github = try #require(theirs.entries.first { $0.title == "GitHub" })
                #expect(github.username == "alice-laptop", "\(tool.rawValue)")
                #expect(github.password == "phone-pw", "\(tool.rawValue)")
                #expect(theirs.entries.count == VaultView(result.vault).entries.count, "\(tool.rawValue)")
            }
        }, edit: { laptop, phone, password in
            try Self.keepassxc(["edit", "-q", "-u", "alice-laptop", laptop.path, "Internet/GitHub"], password: password)
            try Self.keepassxc(["edit", "-q", "-p", phone.path, "Internet/GitHub"], password: password, extraInput: "phone-pw\n")
        })
    }

    @Test("an entry added on each device and one recycled: all present, one recycle bin")
    func addsAndRecycle() throws {
        try Self.withReplicas({ replicas in
            let laptop = try replicas.open("laptop.kdbx"), phone = try replicas.open("phone.kdbx")
            let result = try VaultMerger.merge(base: replicas.base.vault, local: laptop.vault, remote: phone.vault)
            let view = VaultView(result.vault)
            let titles = Set(view.entries.values.map(\.title))
            #expect(titles.isSuperset(of: ["From laptop", "From phone", "GitHub", "Fastmail"]))
            #expect(view.entries.values.first { $0.title == "Fastmail" }?.inRecycleBin == true)
            #expect(view.groups.filter { $0 == "/Recycle Bin" }.count == 1)
        }, edit: { laptop, phone, password in
            try Self.keepassxc(["add", "-q", "-u", "l", laptop.path, "From laptop"], password: password)
            try Self.keepassxc(["rm", "-q", laptop.path, "Internet/Mail/Fastmail"], password: password)
            try Self.keepassxc(["add", "-q", "-u", "p", phone.path, "Internet/From phone"], password: password)
        })
    }

    @Test("recycled on both devices: one recycle bin")
    func bothRecycle() throws {
        try Self.withReplicas({ replicas in
            let laptop = try replicas.open("laptop.kdbx"), phone = try replicas.open("phone.kdbx")
            let result = try VaultMerger.merge(base: replicas.base.vault, local: laptop.vault, remote: phone.vault)
            let view = VaultView(result.vault)
            #expect(view.groups.filter { $0 == "/Recycle Bin" }.count == 1)
            #expect(view.entries.values.filter { $0.inRecycleBin }.map(\.title).sorted() == ["Fastmail", "GitHub"])
        }, edit: { laptop, phone, password in
            try Self.keepassxc(["rm", "-q", laptop.path, "Internet/Mail/Fastmail"], password: password)
            try Self.keepassxc(["rm", "-q", phone.path, "Internet/GitHub"], password: password)
        })
    }
}

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
        try withReplicas(of: { base in try FileManager.default.copyItem(at: fixture.path, to: base) },
                         password: try #require(fixture.credentials.password), body, edit: edit)
    }

    /// Lets `makeBase` write base.kdbx, copies it to laptop/phone and lets `edit` change them.
    static func withReplicas(of makeBase: (URL) throws -> Void, password: String,
                             _ body: (Replicas) throws -> Void, edit: (URL, URL, String) throws -> Void) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("mypass-kxc-merge-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try makeBase(directory.appendingPathComponent("base.kdbx"))
        for name in ["laptop.kdbx", "phone.kdbx"] {
            try FileManager.default.copyItem(at: directory.appendingPathComponent("base.kdbx"), to: directory.appendingPathComponent(name))
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

    /// Merges laptop and phone both ways, with the base and without (ancestors inferred), and hands
    /// each result's view to `check` with a label naming the case.
    static func everyWay(_ replicas: Replicas, _ check: (VaultView, String) throws -> Void) throws {
        let laptop = try replicas.open("laptop.kdbx"), phone = try replicas.open("phone.kdbx")
        for base in [replicas.base.vault, nil] as [Vault?] {
            for (name, local, remote) in [("laptop <- phone", laptop.vault, phone.vault), ("phone <- laptop", phone.vault, laptop.vault)] {
                let result = try VaultMerger.merge(base: base, local: local, remote: remote)
                try check(VaultView(result.vault), "\(name), \(base == nil ? "no base" : "with base")")
            }
        }
    }

    /// KeePass times have one-second resolution: the next device's edit is made a second later.
    static func nextSecond() { waitForNextClockSecond() }

    @Test("edited on the laptop, then recycled on the phone with keepassxc-cli (time and place bumped, no field changed): the edit is current, the entry in the bin — both ways, with and without a base",
          arguments: [false, true])
    func editThenRecycle(recycleFirst: Bool) throws {
        try Self.withReplicas({ replicas in
            try Self.everyWay(replicas) { view, label in
                let github = try #require(view.entries.values.first { $0.title == "GitHub" }, "\(label)")
                #expect(github.username == "alice-laptop", "\(label): the laptop's edit is not current")
                #expect(github.inRecycleBin, "\(label): the entry left the recycle bin")
                #expect(view.groups.filter { $0 == "/Recycle Bin" }.count == 1, "\(label)")
            }
        }, edit: { laptop, phone, password in
            if recycleFirst {
                try Self.keepassxc(["rm", "-q", phone.path, "Internet/GitHub"], password: password)
                Self.nextSecond()
                try Self.keepassxc(["edit", "-q", "-u", "alice-laptop", laptop.path, "Internet/GitHub"], password: password)
            } else {
                try Self.keepassxc(["edit", "-q", "-u", "alice-laptop", laptop.path, "Internet/GitHub"], password: password)
                Self.nextSecond()
                try Self.keepassxc(["rm", "-q", phone.path, "Internet/GitHub"], password: password)
            }
        })
    }

    /// A vault made by keepassxc-cli whose entry Internet/Shop has no history item (nothing both
    /// sides share by time), with a recycle bin already there when `withBin`.
    static func makeShopVault(withBin: Bool, password: String) -> (URL) throws -> Void {
        { base in
            try keepassxc(["db-create", "-q", "-p", "-t", "100", base.path], password: password, extraInput: password + "\n")
            try keepassxc(["mkdir", "-q", base.path, "Internet"], password: password)
            try keepassxc(["add", "-q", "-u", "dave", base.path, "Internet/Shop"], password: password)
            if withBin {
                try keepassxc(["add", "-q", base.path, "Internet/Old"], password: password)
                try keepassxc(["rm", "-q", base.path, "Internet/Old"], password: password)
            }
        }
    }

    @Test("an entry without history edited on one device and recycled on the other with keepassxc-cli (no version shared by time): the edit is current, in the bin — both ways, with and without a base, the bin made by the recycle or already there, recycled after or before the edit",
          arguments: [false, true], [false, true])
    func editThenRecycleWithoutSharedHistory(withBin: Bool, recycleFirst: Bool) throws {
        let password = "kxc-pässword"
        try Self.withReplicas(of: Self.makeShopVault(withBin: withBin, password: password), password: password, { replicas in
            try Self.everyWay(replicas) { view, label in
                let shop = try #require(view.entries.values.first { $0.title == "Shop" }, "\(label)")
                #expect(shop.username == "dave-REMOTE", "\(label): the edit is not current")
                #expect(shop.inRecycleBin, "\(label): the entry left the recycle bin")
                #expect(view.groups.filter { $0 == "/Recycle Bin" }.count == 1, "\(label)")
            }
        }, edit: { laptop, phone, password in
            let edit = { try Self.keepassxc(["edit", "-q", "-u", "dave-REMOTE", laptop.path, "Internet/Shop"], password: password) }
            let recycle = { try Self.keepassxc(["rm", "-q", phone.path, "Internet/Shop"], password: password) }
            for step in recycleFirst ? [recycle, edit] : [edit, recycle] {
                Self.nextSecond()
                try step()
            }
        })
    }

    @Test("a group renamed on the laptop while the phone adds an entry to it with keepassxc-cli (which bumps the group's time): both kept — both ways, with and without a base",
          arguments: [false, true])
    func renameVersusAddedChild(addFirst: Bool) throws {
        try Self.withReplicas({ replicas in
            try Self.everyWay(replicas) { view, label in
                #expect(view.groups.contains("/Web") && !view.groups.contains("/Internet"), "\(label): the rename was lost: \(view.groups)")
                #expect(view.entries.values.first { $0.title == "Added on the phone" }?.group == "/Web", "\(label)")
                #expect(view.entries.values.first { $0.title == "GitHub" }?.group == "/Web", "\(label)")
            }
        }, edit: { laptop, phone, password in
            // keepassxc-cli cannot rename a group: the laptop renames it with this library's KeePass-exact edit.
            func rename() throws {
                let key = try CompositeKey(password: password)
                let opened = try KDBXReader.open(Data(contentsOf: laptop), key: key)
                let internet = try #require(opened.vault.root.groups.first { $0.name == "Internet" })
                let renamed = try opened.vault.renamingGroup(internet.uuid, to: "Web")
                try KDBXWriter.serialize(renamed, settings: opened.settings, key: key).file.write(to: laptop)
            }
            if addFirst {
                try Self.keepassxc(["add", "-q", "-u", "p", phone.path, "Internet/Added on the phone"], password: password)
                Self.nextSecond()
                try rename()
            } else {
                try rename()
                Self.nextSecond()
                try Self.keepassxc(["add", "-q", "-u", "p", phone.path, "Internet/Added on the phone"], password: password)
            }
        })
    }

    @Test("a version saved again with a newer time and no field changed is not an edit: the other device's edit stays current without a base")
    func timeBumpedWithoutChange() throws {
        // keepassxc-cli 2.7 leaves times alone when nothing changes (edit to the same value, show, mv
        // into the same group: checked); other clients re-save entries with a newer time. The phone's
        // version here is the base's content with only LastModificationTime moved on.
        try Self.withReplicas({ replicas in
            let phone = try replicas.open("phone.kdbx")
            let github = try #require(phone.vault.root.allEntries().first { $0.entry.title == "GitHub" }?.entry)
            func bump(_ group: inout Group) {
                for index in group.entries.indices where group.entries[index].uuid == github.uuid {
                    group.entries[index].times.lastModified = .now()
                }
                for index in group.groups.indices { bump(&group.groups[index]) }
            }
            var bumped = phone.vault
            bump(&bumped.root)
            try KDBXWriter.serialize(bumped, settings: phone.settings, key: replicas.key).file
                .write(to: replicas.directory.appendingPathComponent("phone.kdbx"))
            try Self.everyWay(replicas) { view, label in
                #expect(view.entries.values.first { $0.title == "GitHub" }?.username == "alice-laptop", "\(label)")
            }
        }, edit: { laptop, _, password in
            try Self.keepassxc(["edit", "-q", "-u", "alice-laptop", laptop.path, "Internet/GitHub"], password: password)
            Self.nextSecond()
        })
    }
}

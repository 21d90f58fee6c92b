import Foundation
import MyPassCrypto
import Testing
import TestSupport

/// The whole entry from the command line: custom fields and their protect flags, tags, expiry, icon
/// and TOTP, written here and read back by pykeepass and keepassxc-cli.
@Suite("Entry structure: fields, tags, expiry, TOTP (end to end)", .serialized)
struct EntryStructureTests {
    private typealias Fixture = ScratchVault

    private static let uri = "otpauth://totp/Example:me?secret=JBSWY3DPEHPK3PXP&issuer=Example&period=30&digits=6"

    @Test("add with custom fields (one protected from stdin), tags, expiry, icon and TOTP: pykeepass and keepassxc-cli read them")
    func addWholeEntry() throws {
        let fixture = try Fixture()
        defer { try? FileManager.default.removeItem(at: fixture.directory) }
        let multiline = "first line\nzweite Zeile ✓"
        let added = try fixture.run(["add", fixture.vault, "/Bank", "-u", "me", "--field", "Account=DE-42", "--field", "Memo=\(multiline)",
                                     "--field-stdin", "PIN", "--protect", "PIN", "--tags", "money, work", "--expires", "2031-05-01",
                                     "--icon", "12", "--totp-stdin"], lines: ["4711", Self.uri])
        #expect(added.status == 0, "\(added.standardError)")
        let entry = try #require(try fixture.pykeepass("Bank"))
        #expect(entry.fields["Account"] == "DE-42" && entry.fields["Memo"] == multiline && entry.fields["PIN"] == "4711")
        #expect(entry.fields["otp"] == Self.uri)
        #expect(entry.protected.contains("PIN") && entry.protected.contains("otp") && !entry.protected.contains("Account"))
        #expect(entry.tags == ["money", "work"])
        // keepassxc-cli: one attribute, the protected one hidden in the plain listing, the TOTP code.
        #expect(try fixture.keepassxc(["show", "-a", "Account", fixture.vault, "Bank"]).output.trimmingCharacters(in: .whitespacesAndNewlines) == "DE-42")
        let listing = try fixture.keepassxc(["show", "--all", fixture.vault, "Bank"]).output
        #expect(listing.contains("PIN: PROTECTED") && listing.contains("otp: PROTECTED") && listing.contains("Account: DE-42")
                && !listing.contains("4711"), "\(listing)")
        var codesAgree = false
        for _ in 0..<2 where !codesAgree {  // the two reads may straddle a 30 s boundary once
            let theirs = try fixture.keepassxc(["show", "-t", fixture.vault, "Bank"]).output.trimmingCharacters(in: .whitespacesAndNewlines)
            let ours = try ToolRunner.run(["totp", "--password-stdin", fixture.vault, "/Bank"], input: Fixture.password + "\n")
                .standardOutput.split(separator: " ").first.map(String.init) ?? ""
            codesAgree = theirs.hasSuffix(ours) && ours.count == 6
        }
        #expect(codesAgree)
        // Ours: the protected field hidden unless --reveal or asked for by name; tags and expiry shown.
        let shown = try fixture.run(["show", fixture.vault, "/Bank"]).standardOutput
        #expect(shown.contains("PIN: PROTECTED") && !shown.contains("4711"), "\(shown)")
        #expect(shown.contains("Tags: money, work") && shown.contains("Expires: 2031-05-01T00:00:00Z"), "\(shown)")
        #expect(try fixture.run(["show", fixture.vault, "/Bank", "-a", "PIN"]).standardOutput == "4711\n")
        #expect(try fixture.run(["show", "--reveal", fixture.vault, "/Bank"]).standardOutput.contains("PIN: 4711"))
    }

    @Test("edit removes and unprotects fields, changes tags and expiry in one history item; expired entries are marked")
    func editStructure() throws {
        let fixture = try Fixture()
        defer { try? FileManager.default.removeItem(at: fixture.directory) }
        #expect(try fixture.run(["add", fixture.vault, "/Shop", "--field", "Customer=77", "--field", "Old=x", "--protect", "Customer",
                                 "--tags", "a,b"]).status == 0)
        let before = try #require(try fixture.pykeepass("Shop"))
        let edited = try fixture.run(["edit", fixture.vault, "/Shop", "--remove-field", "Old", "--unprotect", "Customer", "--add-tag", "c",
                                      "--remove-tag", "a", "--expires", "2001-01-01T00:00:00Z"])
        #expect(edited.status == 0, "\(edited.standardError)")
        let after = try #require(try fixture.pykeepass("Shop"))
        #expect(after.fields["Old"] == nil && after.fields["Customer"] == "77" && !after.protected.contains("Customer"))
        #expect(after.tags == ["b", "c"])
        #expect(after.historyCount == before.historyCount + 1, "one edit, one history item")
        #expect(try fixture.run(["ls", fixture.vault]).standardOutput.contains("Shop [expired]"))
        // search finds an unprotected custom value, never a protected one.
        #expect(try fixture.run(["search", fixture.vault, "77"]).standardOutput.contains("/Shop [expired]"))
        #expect(try fixture.run(["edit", fixture.vault, "/Shop", "--protect", "Customer", "--expires", "never"]).status == 0)
        #expect(try fixture.run(["search", fixture.vault, "77"]).standardOutput.contains("no entries found"))
        #expect(!(try fixture.run(["ls", fixture.vault]).standardOutput.contains("[expired]")))
    }

    @Test("show --history lists the earlier versions with what each changed; protected values hidden unless --reveal")
    func showHistory() throws {
        let vault = try ScratchVault()
        defer { vault.remove() }
        #expect(try vault.run(["edit", vault.vault, "/No URL", "-u", "carol-2"]).status == 0)
        #expect(try vault.run(["edit", vault.vault, "/No URL", "--entry-password-stdin"], lines: ["carol-new-pw"]).status == 0)
        let shown = try vault.run(["show", vault.vault, "/No URL", "--history"])
        #expect(shown.status == 0, "\(shown.standardError)")
        let history = shown.standardOutput.components(separatedBy: "History: ").last ?? ""
        #expect(history.hasPrefix("2 earlier version(s)"), "\(shown.standardOutput)")
        #expect(history.contains(": UserName=carol\n") && history.contains(": Password=PROTECTED"), "\(history)")
        #expect(!shown.standardOutput.contains("carol-pw"))
        let revealed = try vault.run(["show", vault.vault, "/No URL", "--history", "--reveal"])
        #expect(revealed.standardOutput.contains(": Password=carol-pw"), "\(revealed.standardOutput)")
    }

    @Test("bad field options are usage errors and nothing is written")
    func badInput() throws {
        let fixture = try Fixture()
        defer { try? FileManager.default.removeItem(at: fixture.directory) }
        #expect(try fixture.run(["add", fixture.vault, "/Keep"]).status == 0)
        let before = try fixture.bytes()
        let attempts: [[String]] = [
            ["edit", fixture.vault, "/Keep", "--field", "no-equals-sign"],
            ["edit", fixture.vault, "/Keep", "--remove-field", "Title"],
            ["edit", fixture.vault, "/Keep", "--remove-field", "Missing"],
            ["edit", fixture.vault, "/Keep", "--protect", "Missing"],
            ["edit", fixture.vault, "/Keep", "--totp", "https://not-a-totp.example"],
            ["edit", fixture.vault, "/Keep", "--icon", "99"],
            ["edit", fixture.vault, "/Keep", "--expires", "someday"],
            ["edit", fixture.vault, "/Keep", "--tags", "ok,not;ok"],
        ]
        for arguments in attempts {
            let outcome = try fixture.run(arguments)
            #expect(outcome.status == 2, "\(arguments): \(outcome.status) \(outcome.standardError)")
            #expect(try fixture.bytes() == before, "\(arguments) wrote the vault")
        }
    }

    @Test("mkdir, mv of a group (never into itself), edit-group and rmdir to the recycle bin or for good, read back by pykeepass")
    func groups() throws {
        let fixture = try Fixture()
        defer { try? FileManager.default.removeItem(at: fixture.directory) }
        func view() throws -> ReferenceTools.View {
            try ReferenceTools.view(.pykeepass, path: URL(fileURLWithPath: fixture.vault), password: Fixture.password, keyFile: nil)
        }
        #expect(try fixture.run(["mkdir", fixture.vault, "/Work"]).status == 0)
        #expect(try fixture.run(["mkdir", fixture.vault, "/Work/Sub"]).status == 0)
        #expect(try fixture.run(["add", fixture.vault, "/Work/Sub/Deep"]).status == 0)
        let before = try fixture.bytes()
        #expect(try fixture.run(["mkdir", fixture.vault, "/Missing/X"]).status == 2, "a missing parent is not created")
        #expect(try fixture.run(["mkdir", fixture.vault, "/Work"]).status == 2, "an existing group")
        #expect(try fixture.run(["mv", fixture.vault, "/Work", "/Work/Sub"]).status == 2, "a group into its own subtree")
        #expect(try fixture.bytes() == before)
        #expect(try view().groups.contains("/Work/Sub"))
        #expect(try fixture.keepassxc(["ls", fixture.vault]).output.contains("Work/"))
        #expect(try fixture.run(["mv", fixture.vault, "/Work/Sub", "/"]).status == 0)
        #expect(try fixture.run(["edit-group", fixture.vault, "/Sub", "--name", "Renamed", "--notes", "moved up"]).status == 0)
        let groups = try view().groups
        #expect(groups.contains("/Renamed") && !groups.contains("/Work/Sub"), "\(groups)")
        #expect(try view().entries.contains { $0.title == "Deep" && $0.group == "/Renamed" })
        // To the recycle bin, then for good: a tombstone for the group and for the entry in it.
        #expect(try fixture.run(["rmdir", fixture.vault, "/Renamed"]).status == 0)
        #expect(try view().entries.first { $0.title == "Deep" }?.inRecycleBin == true)
        let tombstones = try view().deletedObjects
        let inBin = try #require(try view().groups.first { $0.hasSuffix("/Renamed") })
        #expect(try fixture.run(["rmdir", "--permanent", fixture.vault, inBin]).status == 0)
        let after = try view()
        #expect(!after.groups.contains { $0.hasSuffix("/Renamed") } && !after.entries.contains { $0.title == "Deep" })
        #expect(try view().deletedObjects == tombstones + 2)
    }

    @Test("attachments: binary, empty and 50 MB bytes read back exactly by keepassxc-cli and pykeepass; replace needs --force; history keeps the old")
    func attachments() throws {
        let fixture = try Fixture()
        defer { try? FileManager.default.removeItem(at: fixture.directory) }
        #expect(try fixture.run(["add", fixture.vault, "/Files"]).status == 0)
        var generator = SystemRandomNumberGenerator()
        let binary = Data((0..<300_000).map { _ in UInt8.random(in: 0...255, using: &generator) } + [0, 0, 10, 13])
        let large = Data((0..<(50 << 20)).lazy.map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) })
        let files = ["binary.bin": binary, "empty.txt": Data(), "large.bin": large]
        for (name, data) in files.sorted(by: { $0.key < $1.key }) {
            let path = fixture.directory.appendingPathComponent("in-" + name).path
            try data.write(to: URL(fileURLWithPath: path))
            let outcome = try fixture.run(["attachment-import", fixture.vault, "/Files", name, path])
            #expect(outcome.status == 0, "\(name): \(outcome.standardError)")
        }
        let entry = try #require(try fixture.pykeepass("Files"))
        let expected = files.map { "\($0.key) \(SHA256.hexHash($0.value))" }.sorted()
        #expect(entry.attachments?.map { "\($0.name) \($0.sha256)" }.sorted() == expected)
        for (name, data) in files {
            let out = fixture.directory.appendingPathComponent("kxc-" + name).path
            let exported = try fixture.keepassxc(["attachment-export", fixture.vault, "Files", name, out])
            #expect(exported.status == 0, "\(exported.standardError)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: out)) == data, "keepassxc-cli read \(name) differently")
        }
        let ours = try fixture.run(["attachment-export", fixture.vault, "/Files", "binary.bin", "--stdout"])
        #expect(Data(ours.standardOutput.utf8).count > 0)
        let file = fixture.directory.appendingPathComponent("ours.bin").path
        #expect(try fixture.run(["attachment-export", fixture.vault, "/Files", "large.bin", file]).status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == large)
        // Replacing needs --force; the old version stays in history (a small entry: KeePass's history
        // size limit, 6 MiB by default, drops items that hold the 50 MB file); removal keeps it there too.
        #expect(try fixture.run(["add", fixture.vault, "/Small"]).status == 0)
        let small = fixture.directory.appendingPathComponent("in-binary.bin").path
        #expect(try fixture.run(["attachment-import", fixture.vault, "/Small", "one.bin", small]).status == 0)
        let replacement = fixture.directory.appendingPathComponent("new.txt").path
        try Data("new".utf8).write(to: URL(fileURLWithPath: replacement))
        let before = try fixture.bytes()
        #expect(try fixture.run(["attachment-import", fixture.vault, "/Small", "one.bin", replacement]).status == 2)
        #expect(try fixture.bytes() == before)
        let start = try #require(try fixture.pykeepass("Small")).historyCount
        #expect(try fixture.run(["attachment-import", "--force", fixture.vault, "/Small", "one.bin", replacement]).status == 0)
        #expect(try fixture.run(["attachment-import", fixture.vault, "/Small", "two.txt", replacement]).status == 0)
        #expect(try fixture.run(["attachment-rm", fixture.vault, "/Small", "two.txt"]).status == 0)
        let after = try #require(try fixture.pykeepass("Small"))
        #expect(after.attachments?.map { "\($0.name) \($0.sha256)" } == ["one.bin \(SHA256.hexHash(Data("new".utf8)))"])
        #expect(after.historyCount == start + 3)
        #expect(try fixture.run(["attachment-rm", fixture.vault, "/Small", "two.txt"]).status == 2)
        // The large entry edited again: its history items (each over the size limit) are dropped with their bytes.
        #expect(try fixture.run(["attachment-rm", fixture.vault, "/Files", "binary.bin"]).status == 0)
        #expect(try fixture.pykeepass("Files")?.attachments?.map(\.name) == ["empty.txt", "large.bin"])
    }
}

@Suite("db-create: new vaults KeePassXC and pykeepass open", .serialized)
struct CreateCommandTests {
    @Test("a password vault (calibrated Argon2d, recycle bin) and a key-file-only vault open in keepassxc-cli and pykeepass; an existing file is never replaced")
    func create() throws {
        let directory = try CLIFixtures.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let vault = directory.appendingPathComponent("new.kdbx").path
        let created = try ToolRunner.run(["db-create", vault, "--password-stdin", "-t", "200"], input: "new-pässword\n")
        #expect(created.status == 0, "\(created.standardError)")
        #expect(created.standardOutput.contains("KDBX 4.0, aes256, argon2d") && created.standardOutput.contains("memory 64 MiB"))
        let view = try ReferenceTools.view(.pykeepass, path: URL(fileURLWithPath: vault), password: "new-pässword", keyFile: nil)
        #expect(view.meta.recycleBin && view.meta.name == "new")
        let listed = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), ["keepassxc-cli", "ls", "-q", vault],
                                           input: Data("new-pässword\n".utf8), environment: ["QT_QPA_PLATFORM": "offscreen"])
        #expect(listed.status == 0 && listed.output.contains("Recycle Bin/"), "\(listed.standardError)")
        let before = try Data(contentsOf: URL(fileURLWithPath: vault))
        #expect(try ToolRunner.run(["db-create", vault, "--password-stdin"], input: "other\n").status == 2)
        #expect(try Data(contentsOf: URL(fileURLWithPath: vault)) == before)
        // Key file only: the key file is created (64 hex digits) and opens the vault in both tools.
        let keyed = directory.appendingPathComponent("keyed.kdbx").path
        let key = directory.appendingPathComponent("vault.key")
        #expect(try ToolRunner.run(["db-create", keyed, "--no-password", "--set-key-file", key.path, "-t", "200"], input: "").status == 0)
        #expect(try Data(contentsOf: key).count == 64)
        #expect(try ReferenceTools.view(.pykeepass, path: URL(fileURLWithPath: keyed), password: nil, keyFile: key).meta.recycleBin)
        let keyedList = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), ["keepassxc-cli", "ls", "-q", "--no-password", "-k", key.path, keyed],
                                              input: Data(), environment: ["QT_QPA_PLATFORM": "offscreen"])
        #expect(keyedList.status == 0, "\(keyedList.standardError)")
        #expect(try ToolRunner.run(["db-create", directory.appendingPathComponent("x.kdbx").path, "--no-password"], input: "").status == 2)
    }
}

@Suite("generate (keepassxc-cli's options)")
struct GenerateCommandTests {
    @Test("the default is 32 letters and digits; -L, classes and --every-group are honoured; an empty set is a usage error")
    func generate() throws {
        let plain = try ToolRunner.run(["generate"], input: "")
        let password = plain.standardOutput.trimmingCharacters(in: .newlines)
        #expect(plain.status == 0 && password.count == 32 && password.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) })
        let special = try ToolRunner.run(["generate", "-s", "-n", "--every-group", "-L", "6"], input: "").standardOutput.trimmingCharacters(in: .newlines)
        let hasDigit = special.contains { $0.isNumber }
        let hasSign = special.contains { $0.isPunctuation || $0.isSymbol }
        #expect(special.count == 6 && hasDigit && hasSign)
        let hasLetter = special.contains { $0.isLetter }
        #expect(!hasLetter)
        #expect(try ToolRunner.run(["generate", "-c", "x", "-x", "x"], input: "").status == 2)
        #expect(try ToolRunner.run(["generate", "-L", "0"], input: "").status == 2)
    }
}

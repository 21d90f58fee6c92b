import Foundation
import Testing
import TestSupport

/// Values and paths a careful user trips over: characters a KeePass file cannot hold, titles with a
/// slash, impossible dates, secrets glued to options or put in argv, a large value on standard input.
@Suite("Values and paths: refused or stored exactly, never altered silently", .serialized)
struct ValueAndPathInputTests {
    @Test("NUL, C0 controls and ESC in a value (from --field-stdin or an option): refused with exit 2 naming the field, nothing written",
          arguments: [UInt32(0x00), 0x01, 0x1B])
    func controlCharactersRefused(codePoint: UInt32) throws {
        let character = String(Character(Unicode.Scalar(codePoint)!))
        let vault = try ScratchVault()
        defer { vault.remove() }
        let before = try vault.bytes()
        let piped = try vault.run(["edit", vault.vault, "/No URL", "--field-stdin", "Pin"], lines: ["12" + character + "34"])
        #expect(piped.status == 2, "\(piped.standardError)")
        #expect(piped.standardError.contains("field Pin") && piped.standardError.contains("control character"), "\(piped.standardError)")
        #expect(!piped.standardError.contains("1234") && !piped.standardError.contains("12" + character), "the value is echoed")
        if codePoint != 0 {  // argv cannot carry a NUL: the C string ends there
            let given = try vault.run(["add", vault.vault, "/New", "-u", "a" + character + "b"])
            #expect(given.status == 2, "\(given.standardError)")
            #expect(given.standardError.contains("field UserName"), "\(given.standardError)")
        }
        #expect(try vault.bytes() == before, "something was written")
        // Tab, line feed and carriage return are text: stored exactly, read back the same by pykeepass.
        let text = try vault.run(["edit", vault.vault, "/No URL", "--field", "Spaced=a\tb"])
        #expect(text.status == 0, "\(text.standardError)")
        #expect(try vault.pykeepass("No URL")?.fields["Spaced"] == "a\tb")
    }

    @Test("a title with a slash is addressed as \\/ in every command and printed so by ls; a path ending in / is not an entry")
    func slashInTitle() throws {
        let vault = try ScratchVault()
        defer { vault.remove() }
        #expect(try vault.run(["add", vault.vault, "/", "--title", "Work/Mail", "-u", "me"]).status == 0)
        #expect(try vault.pykeepass("Work/Mail")?.username == "me")
        let listed = try vault.run(["ls", vault.vault])
        #expect(listed.standardOutput.split(separator: "\n").contains("Work\\/Mail"), "\(listed.standardOutput)")
        let shown = try vault.run(["show", vault.vault, "/Work\\/Mail"])
        #expect(shown.status == 0 && shown.standardOutput.contains("UserName: me"), "\(shown.standardError)")
        #expect(try vault.run(["edit", vault.vault, "/Work\\/Mail", "-u", "you"]).status == 0)
        #expect(try vault.pykeepass("Work/Mail")?.username == "you")
        #expect(try vault.run(["rm", vault.vault, "/Work\\/Mail"]).status == 0)
        #expect(try vault.pykeepass("Work/Mail")?.inRecycleBin == true)
        let before = try vault.bytes()
        let trailing = try vault.run(["add", vault.vault, "/Internet/"])
        #expect(trailing.status == 2 && trailing.standardError.contains("ends in '/'"), "\(trailing.standardError)")
        #expect(try vault.bytes() == before)
    }

    @Test("--expires with a day that does not exist is refused (exit 2); a leap day is a day")
    func impossibleDates() throws {
        let vault = try ScratchVault()
        defer { vault.remove() }
        for date in ["2027-02-30", "2027-02-29", "2027-13-01", "2027-04-31"] {
            let outcome = try vault.run(["edit", vault.vault, "/No URL", "--expires", date])
            #expect(outcome.status == 2, "\(date): \(outcome.standardError)")
        }
        #expect(try vault.run(["edit", vault.vault, "/No URL", "--expires", "2028-02-29"]).status == 0)
        let shown = try vault.run(["show", vault.vault, "/No URL"])
        #expect(shown.standardOutput.contains("2028-02-29"), "\(shown.standardOutput)")
    }

    @Test("a secret glued to an unknown short option is never echoed; --field Password=… warns and points to --field-stdin")
    func secretsInArguments() throws {
        let vault = try ScratchVault()
        defer { vault.remove() }
        let glued = try vault.run(["show", vault.vault, "/No URL", "-pHunter2Secret"])
        #expect(glued.status == 2)
        #expect(!glued.standardError.contains("Hunter2Secret"), "\(glued.standardError)")
        let inArgv = try vault.run(["edit", vault.vault, "/No URL", "--field", "Password=visible-in-ps"])
        #expect(inArgv.status == 0, "\(inArgv.standardError)")
        #expect(inArgv.standardError.contains("warning") && inArgv.standardError.contains("--field-stdin"), "\(inArgv.standardError)")
        #expect(!inArgv.standardError.contains("visible-in-ps"))
    }

    @Test("journal of a vault that is not there: exit 7, not an empty listing")
    func journalOfMissingVault() throws {
        let outcome = try ToolRunner.run(["journal", "/nonexistent/missing.kdbx"])
        #expect(outcome.status == 7, "\(outcome.standardError)")
    }

    @Test("a 10 MB value on standard input is read in one pass and stored whole")
    func largeValueFromStandardInput() throws {
        let vault = try ScratchVault()
        defer { vault.remove() }
        let value = String(repeating: "0123456789", count: 1_000_000)
        let started = Date()
        let outcome = try vault.run(["edit", vault.vault, "/No URL", "--field-stdin", "Big"], lines: [value])
        let seconds = Date().timeIntervalSince(started)
        #expect(outcome.status == 0, "\(outcome.standardError)")
        print("10 MB --field-stdin edit: \(String(format: "%.2f", seconds)) s")
        // A guard against a read per byte (9.4 s before), not a speed target.
        #expect(seconds < 6, "took \(seconds) s")
        let shown = try vault.run(["show", vault.vault, "/No URL", "-a", "Big"])
        #expect(shown.standardOutput.trimmingCharacters(in: .newlines) == value)
    }

    @Test("an argument that is not UTF-8 (a file name in Latin-1) is refused with exit 2; no other name is read or written")
    func nonUTF8Arguments() throws {
        let vault = try ScratchVault()
        defer { vault.remove() }
        // Foundation passes only Unicode strings: the shell makes the bytes.
        func run(_ script: String) throws -> ProcessRunner.Outcome {
            try ProcessRunner.run(URL(fileURLWithPath: "/bin/sh"), ["-c", script, try ToolRunner.binary().path],
                                  input: Data((ScratchVault.password + "\n").utf8), directory: vault.directory)
        }
        try Data("x".utf8).write(to: vault.directory.appendingPathComponent("v\u{FFFD}\u{FFFD}.kdbx"))
        let read = try run(#"exec "$0" info "$(printf 'v\377\376.kdbx')""#)
        #expect(read.status == 2 && read.standardError.contains("not valid UTF-8"), "\(read.standardError)")
        let before = Set(try FileManager.default.contentsOfDirectory(atPath: vault.directory.path))
        let written = try run(#"exec "$0" convert --password-stdin vault.kdbx -o "$(printf 'out\377.kdbx')""#)
        #expect(written.status == 2, "\(written.standardError)")
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: vault.directory.path)) == before, "a file was written")
    }
}

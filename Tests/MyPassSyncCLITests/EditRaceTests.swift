import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Every kind of edit racing another writer: our command has read the vault and waits for its
/// password on standard input; keepassxc-cli writes the vault in that moment; then the password comes.
/// The save must see the other write and merge it — both changes present, neither written over.
@Suite("Edits racing keepassxc-cli: merged, never overwritten (end to end)", .serialized)
struct EditRaceTests {
    /// One race: the command and its extra input lines, what keepassxc-cli does meanwhile, and what
    /// must hold afterwards (checked with pykeepass).
    struct Race: CustomTestStringConvertible, Sendable {
        let label: String
        let setup: [[String]]
        let ours: [String]
        let lines: [String]
        let theirs: [String]
        let check: @Sendable (ReferenceTools.View) -> Bool
        var testDescription: String { label }
    }

    static let attachment = FileManager.default.temporaryDirectory.appendingPathComponent("race-attachment-\(getpid()).bin").path

    static let races: [Race] = [
        Race(label: "add with custom fields, tags and TOTP", setup: [],
             ours: ["add", "VAULT", "/Raced", "--field", "Account=42", "--tags", "race", "--totp-stdin"],
             lines: ["otpauth://totp/X:me?secret=JBSWY3DPEHPK3PXP"], theirs: ["add", "VAULT", "From KeePassXC"]) { view in
            view.entries.contains { $0.title == "Raced" && $0.fields["Account"] == "42" && $0.tags == ["race"] && $0.fields["otp"] != nil }
        },
        Race(label: "edit of custom fields while keepassxc-cli edits the same entry's user name", setup: [],
             ours: ["edit", "VAULT", "/No URL", "--field", "Memo=ours", "--expires", "2040-01-01"], lines: [],
             theirs: ["edit", "-u", "theirs", "VAULT", "No URL"]) { view in
            view.entries.contains { $0.title == "No URL" && $0.fields["Memo"] == "ours" && $0.username == "theirs" }
        },
        Race(label: "attachment-import", setup: [],
             ours: ["attachment-import", "VAULT", "/No URL", "raced.bin", attachment], lines: [],
             theirs: ["add", "VAULT", "From KeePassXC"]) { view in
            view.entries.contains { $0.title == "No URL" && ($0.attachments ?? []).map(\.name).contains("raced.bin") }
        },
        Race(label: "attachment-rm", setup: [["attachment-import", "VAULT", "/No URL", "gone.bin", attachment]],
             ours: ["attachment-rm", "VAULT", "/No URL", "gone.bin"], lines: [],
             theirs: ["add", "VAULT", "From KeePassXC"]) { view in
            view.entries.contains { $0.title == "No URL" && !($0.attachments ?? []).map(\.name).contains("gone.bin") }
        },
        Race(label: "mkdir", setup: [], ours: ["mkdir", "VAULT", "/Raced group"], lines: [],
             theirs: ["add", "VAULT", "From KeePassXC"]) { $0.groups.contains("/Raced group") },
        Race(label: "edit-group", setup: [], ours: ["edit-group", "VAULT", "/Internet", "--name", "Web"], lines: [],
             theirs: ["add", "VAULT", "Internet/From KeePassXC"]) { view in
            view.groups.contains("/Web") && view.entries.contains { $0.title == "From KeePassXC" && $0.group == "/Web" }
        },
        Race(label: "mv of a group", setup: [], ours: ["mv", "VAULT", "/Internet/Mail", "/"], lines: [],
             theirs: ["add", "VAULT", "Internet/Mail/From KeePassXC"]) { view in
            view.groups.contains("/Mail") && view.entries.contains { $0.title == "From KeePassXC" && $0.group == "/Mail" }
        },
        Race(label: "rmdir to the recycle bin", setup: [], ours: ["rmdir", "VAULT", "/Internet/Mail"], lines: [],
             theirs: ["add", "VAULT", "From KeePassXC"]) { view in
            !view.groups.contains("/Internet/Mail") && view.entries.contains { $0.title == "Fastmail" && $0.inRecycleBin }
        },
    ]

    @Test("the edit merges the write keepassxc-cli made while it ran", arguments: races)
    func race(_ race: Race) throws {
        try Data([0, 1, 2, 255, 0x0A, 0x0D]).write(to: URL(fileURLWithPath: Self.attachment))
        let vault = try ScratchVault()
        defer { vault.remove() }
        func substitute(_ arguments: [String]) -> [String] { arguments.map { $0 == "VAULT" ? vault.vault : $0 } }
        for step in race.setup { #expect(try vault.run(substitute(step)).status == 0) }

        let process = Process()
        process.executableURL = try ToolRunner.binary()
        process.arguments = substitute(race.ours) + ["--password-stdin", "--state-dir", vault.stateDirectory]
        let input = Pipe(), errors = Pipe()
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        try process.run()
        // Our command has read the vault once it waits in read(0, …) for the password.
        #expect(Self.waitUntilReadingStandardInput(process.processIdentifier), "the command never waited for its password")
        let theirs = try vault.keepassxc(substitute(race.theirs))
        #expect(theirs.status == 0, "keepassxc-cli: \(theirs.standardError)")
        input.fileHandleForWriting.write(Data(([ScratchVault.password] + race.lines).map { $0 + "\n" }.joined().utf8))
        try input.fileHandleForWriting.close()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(message)")
        #expect(message.contains("changed on disk meanwhile; merged"), "the save did not see the other write: \(message)")
        let view = try vault.pykeepassView()
        #expect(race.check(view), "our change is missing: \(view.groups) \(view.entries.map(\.title))")
        let kept = race.theirs.first == "edit" || view.entries.contains { $0.title == "From KeePassXC" }
        #expect(kept, "keepassxc-cli's write was lost")
    }

    /// Polls /proc/PID/syscall until the process sits in read(2) on descriptor 0; false after 20 s.
    static func waitUntilReadingStandardInput(_ pid: Int32) -> Bool {
        pollUntil(timeout: 20, interval: 0.01) {
            (try? String(contentsOfFile: "/proc/\(pid)/syscall", encoding: .utf8))?.hasPrefix("0 0x0 ") == true
        }
    }
}

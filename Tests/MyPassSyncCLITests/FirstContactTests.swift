import Foundation
import Testing
import TestSupport

/// What a new user meets besides the commands: the progress line on a terminal, the manual page, the
/// command reference and the shell completions (generated from the help and the command table,
/// checked in), the installer.
@Suite("First contact: progress line, man page, completions, install")
struct FirstContactTests {
    static let root = CLIFixtures.directory.deletingLastPathComponent()

    @Test("a merge on a terminal shows one updating progress line on stderr; none with --quiet, none into a pipe")
    func progressLine() throws {
        let vault = try ScratchVault()
        defer { vault.remove() }
        let other = vault.directory.appendingPathComponent("other.kdbx").path
        try FileManager.default.copyItem(atPath: vault.vault, toPath: other)
        #expect(try vault.run(["edit", other, "/No URL", "-u", "someone-else"]).status == 0)
        let arguments = ["merge", vault.vault, other, "--dry-run", "--state-dir", vault.stateDirectory]
        let shown = try PasswordPromptTests.typeAtPrompt(ScratchVault.password, arguments)
        #expect(shown.status == 0, "\(shown.screen)")
        for phase in ["\r\u{1B}[2Kopening the vault and 1 copy", "\r\u{1B}[2Kmerging other.kdbx (1 of 1)"] {
            #expect(shown.screen.contains(phase), "\(phase.debugDescription) not in \(shown.screen.debugDescription)")
        }
        let quiet = try PasswordPromptTests.typeAtPrompt(ScratchVault.password, arguments + ["--quiet"])
        #expect(quiet.status == 0 && !quiet.screen.contains("\u{1B}[2K"), "\(quiet.screen.debugDescription)")
        let piped = try vault.run(["merge", vault.vault, other, "--dry-run"])
        #expect(piped.status == 0 && !piped.standardError.contains("\u{1B}") && !piped.standardError.contains("\r"))
    }

    @Test("the checked-in man page, command reference and completions are exactly what the tool generates from its help and command table",
          arguments: [("contrib/man/mypass-sync.1", ["help", "--man"]), ("docs/commands.md", ["help", "--markdown"]), ("contrib/completions/mypass-sync.bash", ["completion", "bash"]),
                      ("contrib/completions/_mypass-sync", ["completion", "zsh"]), ("contrib/completions/mypass-sync.fish", ["completion", "fish"])])
    func generatedFilesAreCurrent(file: String, arguments: [String]) throws {
        let generated = try ToolRunner.run(arguments)
        #expect(generated.status == 0)
        let checkedIn = try String(contentsOf: Self.root.appendingPathComponent(file), encoding: .utf8)
        #expect(generated.standardOutput == checkedIn, "\(file) is out of date: run scripts/docs")
    }

    @Test("the man page has every command with its options and the exit codes, and renders without warnings")
    func manPageContent() throws {
        let page = try ToolRunner.run(["help", "--man"]).standardOutput
        for needle in [".SS merge", ".SS journal", ".SS undo", ".SS sync", "\\fB\\-\\-explain\\fR", "\\fB\\-\\-known\\-hosts\\fR \\fI<file>\\fR",
                       ".SH EXIT STATUS", "refused for safety"] {
            #expect(page.contains(needle), "\(needle) missing")
        }
        let groff = URL(fileURLWithPath: "/usr/bin/groff")
        let rendered = try ProcessRunner.run(groff, ["-man", "-Tutf8", "-ww", "-z"], input: Data(page.utf8))
        #expect(rendered.status == 0 && rendered.standardError.isEmpty, "\(rendered.standardError)")
        // The rclone wrapper's page, written by hand, renders without a warning too.
        let wrapperPage = try Data(contentsOf: Self.root.appendingPathComponent("contrib/man/mypass-sync-bisync.1"))
        let wrapperRendered = try ProcessRunner.run(groff, ["-man", "-Tutf8", "-ww", "-z"], input: wrapperPage)
        #expect(wrapperRendered.status == 0 && wrapperRendered.standardError.isEmpty, "\(wrapperRendered.standardError)")
    }

    @Test("bash completes commands, options, option choices and .kdbx files; zsh and fish load the scripts")
    func completions() throws {
        let directory = try CLIFixtures.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        for name in ["vault.kdbx", "notes.txt"] { FileManager.default.createFile(atPath: directory.appendingPathComponent(name).path, contents: Data()) }
        let script = Self.root.appendingPathComponent("contrib/completions/mypass-sync.bash").path
        func complete(_ words: [String]) throws -> [String] {
            let line = "source '\(script)'; cd '\(directory.path)'; COMP_WORDS=(\(words.map { "'\($0)'" }.joined(separator: " "))); "
                + "COMP_CWORD=\(words.count - 1); _mypass_sync; printf '%s\\n' \"${COMPREPLY[@]}\""
            let outcome = try ProcessRunner.run(URL(fileURLWithPath: "/bin/bash"), ["-c", line])
            #expect(outcome.status == 0, "\(outcome.standardError)")
            return outcome.output.split(separator: "\n").map(String.init)
        }
        #expect(try complete(["mypass-sync", "jou"]) == ["journal"])
        #expect(try Set(complete(["mypass-sync", "merge", "--ex"])) == ["--explain", "--exit-code"])
        #expect(try complete(["mypass-sync", "watch", "--policy", ""]).sorted() == ["ask", "merge", "reload"])
        #expect(try complete(["mypass-sync", "show", ""]) == ["vault.kdbx"], "vault files, not other files")
        let zsh = URL(fileURLWithPath: "/usr/bin/zsh"), fish = URL(fileURLWithPath: "/usr/bin/fish")
        let zshParses = try ProcessRunner.run(zsh, ["-n", Self.root.appendingPathComponent("contrib/completions/_mypass-sync").path])
        #expect(zshParses.status == 0, "\(zshParses.standardError)")
        let fishLoads = try ProcessRunner.run(fish, ["-c", "source '\(Self.root.path)/contrib/completions/mypass-sync.fish'; complete -C'mypass-sync und'"])
        #expect(fishLoads.status == 0 && fishLoads.output.hasPrefix("undo\t"), "\(fishLoads.standardError)")
    }

    @Test("scripts/install --prefix puts the binary, the rclone bisync script, the man pages and the three completions in place")
    func install() throws {
        let prefix = try CLIFixtures.scratch()
        defer { try? FileManager.default.removeItem(at: prefix) }
        let installed = try ProcessRunner.run(Self.root.appendingPathComponent("scripts/install"),
                                              ["--prefix", prefix.path, "--binary", try ToolRunner.binary().path])
        #expect(installed.status == 0, "\(installed.standardError)")
        for file in ["bin/mypass-sync", "bin/mypass-sync-bisync", "share/man/man1/mypass-sync.1", "share/man/man1/mypass-sync-bisync.1",
                     "share/bash-completion/completions/mypass-sync",
                     "share/zsh/site-functions/_mypass-sync", "share/fish/vendor_completions.d/mypass-sync.fish"] {
            #expect(FileManager.default.fileExists(atPath: prefix.appendingPathComponent(file).path), "\(file) missing")
        }
        let version = try ProcessRunner.run(prefix.appendingPathComponent("bin/mypass-sync"), ["--version"])
        #expect(version.output.hasPrefix("mypass-sync "))
    }
}

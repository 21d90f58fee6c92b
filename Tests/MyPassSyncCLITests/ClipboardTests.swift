import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// `clip` on a real X11 clipboard: an Xvfb server started for the suite (Unix socket only) and xclip
/// reading back what is on the clipboard while `clip` waits and after it cleared it.
@Suite("clip: the X11 clipboard under Xvfb, cleared after the timeout (end to end)", .serialized)
struct ClipboardTests {
    /// An Xvfb display of the test's own.
    final class Display {
        let name: String
        private let server: Process

        init() throws {
            let number = (90..<190).first { !FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\($0)")
                && !FileManager.default.fileExists(atPath: "/tmp/.X\($0)-lock") } ?? 190
            name = ":\(number)"
            // Started with no signal blocked (Tests/TestSupport/Helpers/unblocked.py): with its timer signals blocked, as the test
            // runner's threads have them, Xvfb takes 10 s to come up.
            server = Process()
            server.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            server.arguments = ["python3", unblockedHelper, "/usr/bin/Xvfb", name, "-nolisten", "tcp", "-screen", "0", "640x480x24"]
            server.standardOutput = FileHandle.nullDevice
            server.standardError = FileHandle.nullDevice
            try server.run()
            let started = Date()
            _ = pollUntil(timeout: 10, interval: 0.05) { FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(number)") }
            // The socket exists before the server accepts clients (seen under load): wait until xclip connects.
            _ = try pollUntil(timeout: max(0, 10 - Date().timeIntervalSince(started)), interval: 0.05) {
                let probe = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/xclip"), ["-selection", "clipboard", "-out"],
                                                  environment: ["DISPLAY": name])
                return !probe.standardError.contains("Can't open display")
            }
        }

        deinit {
            server.terminate()
            server.waitUntilExit()
        }

        /// What xclip reads from the clipboard (nil: nothing there).
        func clipboard() throws -> String? {
            let outcome = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/xclip"), ["-selection", "clipboard", "-out"],
                                                environment: ["DISPLAY": name])
            return outcome.status == 0 ? outcome.output : nil
        }

        /// Puts `text` on the clipboard as another program would (through Python, which starts xclip
        /// with no inherited descriptor: the xclip left serving the clipboard must not hold one of ours).
        func copy(_ text: String) throws {
            let script = "import subprocess, sys; subprocess.run(['xclip', '-selection', 'clipboard', '-in'], input=sys.argv[1].encode(), "
                + "stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)"
            let outcome = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", script, text], environment: ["DISPLAY": name])
            precondition(outcome.status == 0, "xclip failed: \(outcome.standardError)")
        }

        /// Waits until the clipboard holds `text`; false after 60 s (a loaded machine opens the vault slowly).
        func waitForClipboard(_ text: String?) throws -> Bool {
            try pollUntil(timeout: 60, interval: 0.1) { try clipboard() == text }
        }
    }

    /// `clip` in the background on `display` (none: no graphical session), with `path` as its PATH when given.
    private func clip(_ arguments: [String], vault: ScratchVault, display: String?, path: String? = nil) throws -> ScratchVault.Running {
        var environment: [String: String?] = ["DISPLAY": display, "WAYLAND_DISPLAY": nil]
        if let path { environment["PATH"] = path }
        return try vault.start(["clip", vault.vault] + arguments, environment: environment)
    }

    /// Waits for `run` to end: its status and everything it printed.
    private func finish(_ run: ScratchVault.Running) -> (Int32, String) {
        let (status, output, errors) = run.finish()
        return (status, output + errors)
    }

    @Test("the password is on the clipboard while clip waits and gone after the timeout; the serving helper has no signal blocked",
          arguments: ["xclip", "xsel"])
    func copiesAndClears(tool: String) throws {
        let display = try Display()
        let vault = try ScratchVault()
        defer { vault.remove() }
        // A PATH with only this tool on it, so that clip finds no other.
        let tools = vault.directory.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: tools, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: tools.appendingPathComponent(tool).path, withDestinationPath: "/usr/bin/\(tool)")
        let started = Date()
        // A clear time long enough that a loaded machine still reads the clipboard before it (3 s was missed).
        let clip = try clip(["/No URL", "10"], vault: vault, display: display.name, path: tools.path)
        #expect(try display.waitForClipboard("carol-pw"), "the password never reached the clipboard")
        // The helper left serving the clipboard can be ended by SIGINT/SIGTERM (nothing inherited from clip's mask).
        let servers = try FileManager.default.contentsOfDirectory(atPath: "/proc").compactMap(Int32.init).filter { pid in
            let command = (try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8)) ?? ""
            let environment = (try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/environ"))) ?? Data()
            return command.hasPrefix(tools.appendingPathComponent(tool).path)
                && String(decoding: environment, as: UTF8.self).contains("DISPLAY=\(display.name)\0")
        }
        #expect(!servers.isEmpty)
        for pid in servers {
            let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
            #expect(status.contains("SigBlk:\t0000000000000000"), "\(tool) \(pid) started with signals blocked")
        }
        let (status, text) = finish(clip)
        #expect(status == 0, "\(text)")
        #expect(Date().timeIntervalSince(started) >= 10)
        #expect(text.contains("copied to the clipboard (\(tool))") && text.contains("Clipboard cleared") && !text.contains("carol-pw"), "\(text)")
        #expect(try display.clipboard() ?? "" == "")
    }

    @Test("something copied after clip is left alone at the timeout")
    func leavesNewerContent() throws {
        let display = try Display()
        let vault = try ScratchVault()
        defer { vault.remove() }
        let clip = try clip(["/No URL", "10", "-a", "UserName"], vault: vault, display: display.name)
        #expect(try display.waitForClipboard("carol"))
        try display.copy("the user's own text")
        let (status, text) = finish(clip)
        #expect(status == 0 && text.contains("left as it is"), "\(text)")
        #expect(try display.clipboard() == "the user's own text")
    }

    @Test("--totp copies the current code; Ctrl-C (SIGINT) during the wait clears at once")
    func totpAndInterrupt() throws {
        let display = try Display()
        let vault = try ScratchVault()
        defer { vault.remove() }
        #expect(try vault.run(["edit", vault.vault, "/No URL", "--totp-stdin"],
                              lines: ["otpauth://totp/Ex:me?secret=JBSWY3DPEHPK3PXP&issuer=Ex"]).status == 0)
        let clip = try clip(["/No URL", "600", "--totp"], vault: vault, display: display.name)
        var code: String?
        _ = try pollUntil(timeout: 15, interval: 0.1) {
            if let text = try display.clipboard(), text.count == 6, text.allSatisfy(\.isNumber) { code = text }
            return code != nil
        }
        // The code of now or of the period before (the copy may straddle a 30 s boundary).
        let now = Int(Date().timeIntervalSince1970)
        let codes = try [now, now - 30].map { time in
            try ToolRunner.run(["totp", vault.vault, "/No URL", "--time", "\(time)", "--password-stdin"], input: ScratchVault.password + "\n")
                .standardOutput.prefix(6).description
        }
        #expect(code.map(codes.contains) == true, "clipboard \(code ?? "nil"), totp \(codes)")
        let interrupted = Date()
        kill(clip.process.processIdentifier, SIGINT)
        let (status, text) = finish(clip)
        #expect(status == 0 && text.contains("Clipboard cleared"), "\(text)")
        #expect(Date().timeIntervalSince(interrupted) < 5)
        #expect(try display.clipboard() ?? "" == "")
    }

    @Test("without a graphical session clip says so with exit 7 before asking for the password")
    func noClipboard() throws {
        let vault = try ScratchVault()
        defer { vault.remove() }
        let clip = try clip(["/No URL"], vault: vault, display: nil)
        let (status, text) = finish(clip)
        #expect(status == 7 && text.contains("no clipboard: neither WAYLAND_DISPLAY nor DISPLAY is set"), "\(text)")
        #expect(try ToolRunner.run(["clip", vault.vault, "/No URL", "soon"]).status == 2)
    }
}

import Foundation
import Testing
import TestSupport

/// One device of a remote-sync test: a working copy with its own sync state, synced with `url`
/// (the options say how to reach the server: a netrc file, an SSH key and known-hosts file).
struct RemoteDevice {
    let vault: ScratchVault
    let url: String
    let options: [String]

    init(_ url: String, _ options: [String]) throws {
        vault = try ScratchVault()
        self.url = url
        self.options = options
    }

    func sync(_ extra: [String] = [], environment: [String: String] = [:]) throws -> ToolRunner.Outcome {
        try vault.run(["sync", vault.vault, "--remote", url] + options + ["--json"] + extra, environment: environment)
    }

    /// `sync` of this device started in the background.
    func start(_ extra: [String], environment: [String: String?] = [:]) throws -> ScratchVault.Running {
        try vault.start(["sync", vault.vault, "--remote", url] + options + extra, environment: environment)
    }

    /// One sync's JSON report (the sync must succeed).
    func report(_ extra: [String] = []) throws -> [String: Any] {
        let outcome = try sync(extra)
        #expect(outcome.status == 0, "\(outcome.standardError)")
        return (try? JSONSerialization.jsonObject(with: Data(outcome.standardOutput.utf8)) as? [String: Any]) ?? [:]
    }

    /// The titles of the entries outside the recycle bin, read by pykeepass.
    func titles() throws -> Set<String> { Set(try vault.pykeepassView().entries.filter { !$0.inRecycleBin }.map(\.title)) }
}

extension RemoteDevice {
    /// `a` and `b` edit (each a new entry, and different fields of one entry) and sync in turn for
    /// `rounds` rounds; the titles both must end up with. The last edit of "No URL" is round `rounds`.
    static func editInTurns(_ a: RemoteDevice, _ b: RemoteDevice, rounds: Int) throws -> Set<String> {
        var expected = try a.titles()
        for round in 1...rounds {
            #expect(try a.vault.run(["add", a.vault.vault, "/A-\(round)"]).status == 0)
            #expect(try b.vault.run(["add", b.vault.vault, "/B-\(round)"]).status == 0)
            #expect(try b.vault.run(["edit", b.vault.vault, "/No URL", "--field", "Round=\(round)"]).status == 0)
            #expect(try a.vault.run(["edit", a.vault.vault, "/No URL", "-u", "a-user-\(round)"]).status == 0)
            expected.formUnion(["A-\(round)", "B-\(round)"])
            _ = try a.report()
            _ = try b.report()
        }
        return expected
    }

    /// Two devices made by `make`, both synced once, then each with an entry of its own not yet
    /// synced ("From A", "From B").
    static func divergedPair(_ make: () throws -> RemoteDevice) throws -> (RemoteDevice, RemoteDevice) {
        let (a, b) = (try make(), try make())
        _ = try a.report()
        _ = try b.report()
        #expect(try a.vault.run(["add", a.vault.vault, "/From A"]).status == 0)
        #expect(try b.vault.run(["add", b.vault.vault, "/From B"]).status == 0)
        return (a, b)
    }

    /// This device's `sync --json` started in the background and paused at the test hook `variable`
    /// (`MYPASS_SYNC_BEFORE_UPLOAD`, …); returns once it waits there. Create `hook + ".go"` to resume.
    func startPaused(at variable: String) throws -> (running: ScratchVault.Running, hook: String) {
        let hook = vault.directory.appendingPathComponent("hook-\(variable)").path
        let running = try start(["--json"], environment: [variable: hook])
        waitUntil("the sync to reach \(variable)") { FileManager.default.fileExists(atPath: hook + ".waiting") }
        return (running, hook)
    }
}

import Foundation
import KDBXFormat
import MyPassCore
import MyPassCrypto
import Synchronization
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// One group shared through a KeeShare container in a folder that real Syncthing keeps in step between
/// two (or three) devices; each device has a vault of its own (its own password, in a folder of its
/// own that nothing syncs), its own `mypass-sync daemon` with a real session bus, keyring and
/// notification server, and its own editing program: keepassxc-cli on the first, pykeepass on the
/// second, mypass-sync's own command line on the third. After the start nothing but the daemons
/// (and Syncthing) moves anything: both devices' edits, of one entry field by field and new entries,
/// end up in every vault's shared group; nothing outside the shared groups reaches the container;
/// the container's password shows nowhere; everything goes quiet and stays so.
@Suite("shared group through a container in a real Syncthing folder: vaults with different passwords on several devices, kept in step by the daemons alone",
       .serialized)
struct SharedGroupSyncthingTests {
    static let containerPassword = "family-share-pw"
    static let start = Timestamp(unixSeconds: 1_764_000_000)
    /// How long each device's vault takes to hold every edit, at most (Syncthing's default watcher delay
    /// is 10 s a hop; a conflict on the container costs a few hops).
    static let convergenceBound: TimeInterval = 240
    /// Nothing may happen for this long (more than two of Syncthing's 10 s watcher delays) to count as quiet.
    static let quietWindow: TimeInterval = 25
    static let quietBound: TimeInterval = 180

    // MARK: - The vaults

    static func entry(_ title: String, username: String, password: String, url: String = "", notes: String = "") -> Entry {
        Entry(uuid: UUID(), times: Times(allAt: start), fields: [
            EntryField(key: EntryField.title, value: FieldValue(title, isProtected: false)),
            EntryField(key: EntryField.userName, value: FieldValue(username, isProtected: false)),
            EntryField(key: EntryField.password, value: FieldValue(password, isProtected: true)),
            EntryField(key: EntryField.url, value: FieldValue(url, isProtected: false)),
            EntryField(key: EntryField.notes, value: FieldValue(notes, isProtected: false)),
        ])
    }

    static func group(_ name: String, _ entries: [Entry]) -> Group {
        Group(uuid: UUID(), name: name, times: Times(allAt: start), entries: entries)
    }

    /// A vault of the given groups under its root, written with a cheap KDF (AES-KDF, 1,000 rounds) so
    /// that pykeepass and keepassxc-cli open it quickly.
    static func write(_ groups: [Group], name: String, password: String, to path: String) throws {
        var vault = Vault.empty(name: name, at: start)
        vault.root.groups = groups
        let settings = FormatSettings(version: .v4_0, cipher: .aes256, kdf: .aesKDF(seed: Data((0..<32).map { _ in UInt8.random(in: 0...255) }), rounds: 1_000),
                                      compression: .gzip)
        try KDBXWriter.serialize(vault, settings: settings, key: try CompositeKey(password: password)).file.write(to: URL(fileURLWithPath: path))
        chmod(path, 0o600)
    }

    // MARK: - A device

    /// One device: a session bus with a keyring and dunst, a daemon home, a vault in the home's own
    /// (unsynced) folder, its copy of the Syncthing folder, and the daemon once started.
    final class Device: @unchecked Sendable {
        let name: String
        let password: String
        /// The shared group's path in this device's vault ("/Family", "/Shared").
        let group: String
        /// What this device edits with: keepassxc-cli, pykeepass, mypass-sync.
        let tool: ReferenceTools.Tool?
        let session: SecretServiceSession
        let notices: NotificationServer
        let home: DaemonHome
        let vault: String
        let container: String
        let passwordCommand: String
        var daemon: DaemonProcess?

        init(name: String, password: String, group: String, tool: ReferenceTools.Tool?, sharedFolder: String, groups: [Group]) throws {
            self.name = name
            self.password = password
            self.group = group
            self.tool = tool
            session = try SecretServiceSession()
            notices = try NotificationServer(bus: session.environment)
            home = try DaemonHome(root: session.home, extra: session.environment)
            vault = home.sync.appendingPathComponent("\(name).kdbx").path
            container = sharedFolder + "/family.kdbx"
            try SharedGroupSyncthingTests.write(groups, name: name, password: password, to: vault)
            passwordCommand = try home.passwordCommand(password, name: "\(name).pw")
        }

        deinit {
            if let daemon { _ = daemon.end(with: SIGKILL) }
            session.stop()
        }

        /// `share add VAULT GROUP --sync-with CONTAINER`, both passwords on standard input.
        func shareAdd() throws -> ToolRunner.Outcome {
            try home.tool(["share", "add", vault, group, "--sync-with", container, "--container-password-stdin", "--password-stdin"],
                          input: "\(password)\n\(SharedGroupSyncthingTests.containerPassword)\n")
        }

        func startDaemon() throws {
            let added = try home.tool(["daemon", "add", vault, "--password-command", passwordCommand])
            #expect(added.status == 0, "\(name): daemon add: \(added.standardError)")
            daemon = try DaemonProcess(home)
        }

        /// The vault as this device's own program reads it (pykeepass for the pykeepass device,
        /// keepassxc-cli otherwise); nil while it does not read.
        func view() -> ReferenceTools.View? {
            try? ReferenceTools.view(tool ?? .keepassxc, path: URL(fileURLWithPath: vault), password: password, keyFile: nil)
        }

        /// What identifies the vault file's version without reading it.
        func fileStamp() -> String {
            var info = stat()
            guard stat(vault, &info) == 0 else { return "absent" }
            return "\(info.st_ino) \(info.st_size) \(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)"
        }

        /// Every event the daemon printed, its errors, `daemon status --json` and the notices: where the
        /// container's password must never show.
        func everythingPrinted() throws -> String {
            let status = try home.tool(["daemon", "status", "--json"])
            return (daemon?.outputText ?? "") + (daemon?.errorText ?? "") + status.standardOutput + status.standardError
                + (try notices.history().text)
        }
    }

    // MARK: - The edits

    /// An edit one device makes with its own program: a field of an existing entry, or a new entry.
    struct Edit {
        let title: String
        /// keepassxc-cli's option, pykeepass's attribute, mypass-sync's option.
        let field: String
        let value: String
        let adds: Bool
    }

    /// The edits of device `index` (0: keepassxc-cli, 1: pykeepass, 2: mypass-sync): a field of the
    /// shared entry "Bank" (a different field on each device) or of "Mail", and an entry of its own.
    static func edits(of index: Int) -> [Edit] {
        switch index {
        case 0: [Edit(title: "Bank", field: "username", value: "alice-edited-with-keepassxc", adds: false),
                 Edit(title: "Added by A", field: "username", value: "added-a", adds: true)]
        case 1: [Edit(title: "Bank", field: "url", value: "https://bank.example/edited-with-pykeepass", adds: false),
                 Edit(title: "Added by B", field: "username", value: "added-b", adds: true)]
        default: [Edit(title: "Bank", field: "notes", value: "notes edited with mypass-sync", adds: false),
                  Edit(title: "Added by C", field: "username", value: "added-c", adds: true)]
        }
    }

    /// Makes device `index`'s edits with its own program; what failed.
    static func edit(_ device: Device, index: Int) throws -> [String] {
        var failures: [String] = []
        let edits = Self.edits(of: index)
        switch index {
        case 0:
            for edit in edits {
                let arguments = ["keepassxc-cli", edit.adds ? "add" : "edit", "-q", "-u", edit.value, device.vault, "\(device.group.dropFirst())/\(edit.title)"]
                let outcome = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), arguments, input: Data((device.password + "\n").utf8),
                                                    environment: ["QT_QPA_PLATFORM": "offscreen"])
                if outcome.status != 0 { failures.append("keepassxc-cli \(arguments[1]) \(edit.title): \(outcome.standardError)") }
            }
        case 1:
            let list = edits.map { edit -> [String] in
                edit.adds ? ["add", device.group, edit.title, edit.value] : ["set", device.group, edit.title, edit.field, edit.value]
            }
            let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Helpers/pykeepass_edit.py").path
            let text = String(decoding: try JSONSerialization.data(withJSONObject: list), as: UTF8.self)
            let outcome = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", script, device.vault, text],
                                                input: Data((device.password + "\n").utf8))
            if outcome.status != 0 { failures.append("pykeepass: \(outcome.standardError)") }
        default:
            for edit in edits {
                let arguments = [edit.adds ? "add" : "edit", device.vault, "\(device.group)/\(edit.title)", "--\(edit.field)", edit.value,
                                 "--password-command", device.passwordCommand]
                let outcome = try device.home.tool(arguments)
                if outcome.status != 0 { failures.append("mypass-sync \(arguments[0]) \(edit.title): \(outcome.standardError)") }
            }
        }
        return failures
    }

    /// What is still missing from `view`'s shared group `group` for every edit of `devices` devices to
    /// be there (empty: all there), and the entries of the group.
    static func missing(in view: ReferenceTools.View, group: String, devices: Int) -> (missing: [String], entries: [FixtureVault.Entry]) {
        let entries = view.entries.filter { $0.group == group && !$0.inRecycleBin }
        var missing: [String] = []
        for title in ["Bank", "Mail"] where !entries.contains(where: { $0.title == title }) { missing.append(title) }
        for index in 0..<devices {
            for edit in edits(of: index) {
                guard let entry = entries.first(where: { $0.title == edit.title }) else {
                    missing.append(edit.title)
                    continue
                }
                let value = switch edit.field {
                case "username": entry.username
                case "url": entry.url
                default: entry.notes
                }
                if value != edit.value { missing.append("\(edit.title) \(edit.field) = \(edit.value) (is \(value))") }
            }
        }
        return (missing, entries)
    }

    // MARK: - The scene

    func run(devices count: Int) throws {
        let started = Date()
        func elapsed() -> String { String(format: "%.1f s", Date().timeIntervalSince(started)) }
        let syncthing = try SyncthingFolder(root: try CLIFixtures.scratch(), devices: count)
        defer { syncthing.stop() }
        #expect(syncthing.peerAddresses.count == count * (count - 1) && syncthing.peerAddresses.allSatisfy { $0?.hasPrefix("127.0.0.1:") == true },
                "the Syncthing peers did not all connect over loopback: \(syncthing.peerAddresses)")
        #expect(syncthing.nonDefaultFolderSettingNames.isEmpty, "folder settings other than Syncthing's defaults: \(syncthing.nonDefaultFolderSettingNames)")

        // The first device's vault: /Family shared, /Private not. The others: an empty /Shared and a group of their own.
        let names = ["alpha", "beta", "gamma"]
        let tools: [ReferenceTools.Tool?] = [.keepassxc, .pykeepass, nil]
        var devices: [Device] = []
        for index in 0..<count {
            let groups = index == 0
                ? [Self.group("Family", [Self.entry("Bank", username: "alice", password: "bank-pw-alpha", url: "https://bank.example"),
                                         Self.entry("Mail", username: "family@mail.example", password: "mail-pw-alpha")]),
                   Self.group("Private", [Self.entry("Diary", username: "alice", password: "diary-secret-alpha", notes: "private to alpha")])]
                : [Self.group("Shared", []),
                   Self.group("Personal", [Self.entry("Gym \(names[index])", username: names[index], password: "gym-secret-\(names[index])",
                                                      notes: "private to \(names[index])")])]
            devices.append(try Device(name: names[index], password: "\(names[index])-vault-pw", group: index == 0 ? "/Family" : "/Shared",
                                      tool: tools[index], sharedFolder: syncthing.folders[index], groups: groups))
        }
        let privateTitles = ["Diary"] + names.dropFirst().map { "Gym \($0)" }
        let privateValues = ["diary-secret-alpha", "private to alpha"] + names.dropFirst().flatMap { ["gym-secret-\($0)", "private to \($0)"] }

        // The first device shares /Family and writes the container once by hand; it reaches the others through Syncthing.
        let owner = devices[0]
        let added = try owner.shareAdd()
        #expect(added.status == 0, "share add on \(owner.name): \(added.standardError)")
        let synced = try owner.home.tool(["share", "sync", owner.vault, "--password-stdin"], input: owner.password + "\n")
        #expect(synced.status == 0 && FileManager.default.fileExists(atPath: owner.container), "share sync on \(owner.name): \(synced.standardOutput) \(synced.standardError)")
        let first = try Data(contentsOf: URL(fileURLWithPath: owner.container))
        #expect(pollUntil(timeout: 120, interval: 0.25) {
            devices.dropFirst().allSatisfy { (try? Data(contentsOf: URL(fileURLWithPath: $0.container))) == first }
        }, "the container did not reach every device through Syncthing")
        for device in devices.dropFirst() {
            let outcome = try device.shareAdd()
            #expect(outcome.status == 0, "share add on \(device.name): \(outcome.standardError)")
        }
        print("shared group over Syncthing, \(count) devices: container on every device after \(elapsed())")

        // Each daemon starts; the others' shared groups fill from the container with nothing done by hand.
        for device in devices { try device.startDaemon() }
        for device in devices {
            // `share add` already recorded the vault's base here: watched is all there is to wait for.
            #expect(pollUntil(timeout: 120, interval: 0.5) { device.daemon?.state(of: device.vault) == "watching" },
                    "\(device.name): not watching: \(device.daemon?.outputText.suffix(1500) ?? "")")
        }
        for device in devices.dropFirst() {
            #expect(pollUntil(timeout: 120, interval: 0.5) {
                device.view()?.entries.contains { $0.group == "/Shared" && $0.title == "Bank" } == true
            }, "\(device.name): the container was never imported: \(device.daemon?.outputText.suffix(2000) ?? "")")
        }
        let importedAt = Date()
        print("shared group over Syncthing, \(count) devices: every shared group filled after \(elapsed())")

        // Every device edits at once with its own program: a field of Bank each (a different one), an entry each.
        let failures = Mutex<[String]>([])
        let done = Mutex(0)
        let workers = devices.enumerated().map { index, device in
            Thread {
                let failed = (try? Self.edit(device, index: index)) ?? ["\(device.name): the edit did not run"]
                failures.withLock { $0 += failed }
                done.withLock { $0 += 1 }
            }
        }
        for worker in workers { worker.start() }
        #expect(pollUntil(timeout: 180, interval: 0.1) { done.withLock { $0 } == count }, "the edits did not finish")
        let editsDone = Date()
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")

        // The container's conflict copies seen on any device (two devices wrote it at once), for the report.
        var copiesSeen = Set<String>()
        func noteCopies() {
            for device in devices {
                let folder = PathTextForTests.folder(of: device.container)
                for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] where name.contains(".sync-conflict-") {
                    copiesSeen.insert(name)
                }
            }
        }

        // Until every vault holds every edit: each read with its own program when its file changed.
        var stamps: [String: String] = [:]
        var lastMissing: [String: [String]] = [:]
        let converged = pollUntil(timeout: Self.convergenceBound, interval: 0.25) {
            noteCopies()
            for device in devices {
                let stamp = device.fileStamp()
                guard stamps[device.name] != stamp else { continue }
                guard let view = device.view() else { continue }  // read again on the next round
                stamps[device.name] = stamp
                lastMissing[device.name] = Self.missing(in: view, group: device.group, devices: count).missing
            }
            return devices.allSatisfy { lastMissing[$0.name]?.isEmpty == true }
        }
        let convergedAt = Date()
        #expect(converged, """
            not every edit reached every vault within \(Int(Self.convergenceBound)) s: missing \(lastMissing); \
            \(devices.map { "\($0.name): \($0.daemon?.outputText.suffix(3000) ?? "")" }.joined(separator: "\n"))
            """)

        // Quiet: no event from any daemon, no vault or container changing, the containers the same on
        // every device and no conflict copy of it left, for `quietWindow` s in a row.
        func snapshot() -> [String] {
            devices.flatMap { device -> [String] in
                let bytes = (try? Data(contentsOf: URL(fileURLWithPath: device.container))).map { SHA256.hexHash($0) } ?? "absent"
                let folder = PathTextForTests.folder(of: device.container)
                let copies = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.contains(".sync-conflict-") }.sorted()
                return ["\(device.daemon?.events.count ?? -1)", device.fileStamp(), bytes, copies.joined(separator: ",")]
            }
        }
        func containersAgree() -> Bool {
            let all = devices.map { try? Data(contentsOf: URL(fileURLWithPath: $0.container)) }
            return all.allSatisfy { $0 != nil } && Set(all).count == 1
        }
        var (last, since) = (snapshot(), Date())
        let quiet = pollUntil(timeout: Self.quietBound, interval: 0.5) {
            noteCopies()
            let now = snapshot()
            if now != last { (last, since) = (now, Date()) }
            return Date().timeIntervalSince(since) >= Self.quietWindow && containersAgree()
                && !now.contains { $0.contains(".sync-conflict-") }
        }
        let quietSince = since
        #expect(quiet, "the devices did not go quiet within \(Int(Self.quietBound)) s of every edit arriving: \(last)")
        let idle = syncthing.status()
        #expect(idle?.allSatisfy { $0["idle"] as? Bool == true } == true, "Syncthing is not idle: \(String(describing: idle))")

        // Every vault again, as its own program reads it: every edit, the same entries, nothing private.
        var groupEntries: [[String: String]] = []
        for device in devices {
            let view = try #require(device.view(), "\(device.name)'s vault does not read")
            let (missing, entries) = Self.missing(in: view, group: device.group, devices: count)
            #expect(missing.isEmpty, "\(device.name): \(missing)")
            groupEntries.append(Dictionary(entries.map { ($0.uuid, "\($0.title)|\($0.username)|\($0.url)|\($0.notes)|\($0.password)") }) { $1 })
            let others = view.entries.filter { $0.group != device.group && !$0.inRecycleBin }
            let foreign = others.filter { entry in privateTitles.contains(entry.title) && !(device === owner ? entry.title == "Diary" : entry.title == "Gym \(device.name)") }
            #expect(foreign.isEmpty, "\(device.name) holds another device's private entries: \(foreign.map(\.title))")
            #expect(!entries.contains { privateTitles.contains($0.title) }, "\(device.name)'s shared group holds a private entry")
        }
        #expect(Set(groupEntries).count == 1, "the shared groups differ: \(groupEntries)")

        // The container, opened by keepassxc-cli with its password: the shared entries and nothing else.
        let container = try ReferenceTools.view(.keepassxc, path: URL(fileURLWithPath: owner.container), password: Self.containerPassword, keyFile: nil)
        let containerEntries = container.entries.filter { !$0.inRecycleBin }
        #expect(Set(containerEntries.map(\.title)) == Set(["Bank", "Mail"] + (0..<count).map { Self.edits(of: $0)[1].title }),
                "the container holds \(containerEntries.map(\.title))")
        let inContainer = Self.missing(in: container, group: "/", devices: count).missing
        #expect(inContainer.isEmpty, "the container lacks \(inContainer) (its entries: \(containerEntries.map { "\($0.group) \($0.title)" }))")
        let containerText = containerEntries.map { "\($0.title) \($0.username) \($0.password) \($0.url) \($0.notes) \($0.fields)" }.joined(separator: "\n")
        for secret in privateTitles + privateValues { #expect(!containerText.contains(secret), "the container holds \(secret)") }

        // The daemons: the share approved, imported and exported; no error; the container's password nowhere.
        for device in devices {
            let daemon = try #require(device.daemon)
            let status = try daemon.status()[device.vault]
            let shares = status?["shares"] as? [[String: Any]] ?? []
            #expect(shares.count == 1, "\(device.name): \(String(describing: status))")
            if let share = shares.first {
                #expect(share["group"] as? String == device.group && share["approved"] as? Bool == true, "\(device.name): \(share)")
                #expect(share["lastImport"] != nil && !(share["lastImport"] is NSNull) && share["lastExport"] != nil && !(share["lastExport"] is NSNull),
                        "\(device.name): \(share)")
                #expect(share["problem"] == nil || share["problem"] is NSNull, "\(device.name): \(share)")
            }
            let problems = daemon.events.filter { ["error", "refused", "unreadable", "keyChanged"].contains($0["kind"] as? String ?? "") }
            #expect(problems.isEmpty, "\(device.name): \(problems)")
            let idleShares = daemon.events("shareIdle", vault: device.vault)
            #expect(!idleShares.contains { ($0["detail"] as? String ?? "").contains("failed") }, "\(device.name): \(idleShares)")
            let printed = try device.everythingPrinted()
            #expect(!printed.contains(Self.containerPassword), "\(device.name): the container's password was printed")
            #expect(!stateFilesContain(device.home.root.appendingPathComponent("state").path, Self.containerPassword),
                    "\(device.name): the container's password is in a state file in the clear")
        }

        // Still quiet: a second look, a window later.
        let before = snapshot()
        #expect(!pollUntil(timeout: Self.quietWindow, interval: 0.5) { snapshot() != before }, "something moved after the quiet period")
        let counts = devices.map { device in
            "\(device.name): \(device.daemon?.events("shareSynced", vault: device.vault).count ?? 0) shareSynced, "
                + "\(device.daemon?.events.filter { ($0["kind"] as? String) == "shareSynced" && (($0["changes"] as? [Any])?.isEmpty == false) }.count ?? 0) importing"
        }
        print("""
            shared group over Syncthing, \(count) devices: edits made in \(String(format: "%.1f", editsDone.timeIntervalSince(importedAt))) s; \
            every edit in every vault \(String(format: "%.1f", convergedAt.timeIntervalSince(editsDone))) s after the edits; quiet from \
            \(String(format: "%.1f", quietSince.timeIntervalSince(editsDone))) s after the edits; \(counts.joined(separator: "; ")); \
            container conflict copies seen: \(copiesSeen.sorted()); \(elapsed()) in all
            """)
        for device in devices { #expect(device.daemon?.end() == 0, "\(device.name): the daemon did not end cleanly") }
    }

    /// Whether any file under `directory` holds `text` as it is.
    func stateFilesContain(_ directory: String, _ text: String) -> Bool {
        guard let walker = FileManager.default.enumerator(atPath: directory) else { return false }
        let needle = Data(text.utf8)
        for case let name as String in walker {
            let path = directory + "/" + name
            if let data = FileManager.default.contents(atPath: path), data.range(of: needle) != nil { return true }
        }
        return false
    }

    @Test("two devices (keepassxc-cli and pykeepass), different vault passwords, one container in a Syncthing folder: both end with every edit, then quiet")
    func twoDevices() throws {
        try run(devices: 2)
    }

    @Test("three devices (keepassxc-cli, pykeepass, mypass-sync): all end with every edit, then quiet")
    func threeDevices() throws {
        try run(devices: 3)
    }
}

/// The lines a helper printed so far.
private final class Lines: Sendable {
    let value = Mutex<[String]>([])
}

/// Real Syncthing on loopback sharing one empty folder between two or three devices
/// (`Helpers/syncthing_folder.py`), until `stop()`.
final class SyncthingFolder {
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private let lines = Lines()
    private let errors: URL
    let root: URL
    let folders: [String]
    let peerAddresses: [String?]
    let nonDefaultFolderSettingNames: [String]

    struct Failure: Error, CustomStringConvertible { let description: String }

    init(root: URL, devices: Int) throws {
        self.root = root
        errors = root.appendingPathComponent("syncthing_folder.err")
        _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
        let helper = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Helpers/syncthing_folder.py").path
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", helper, "--root", root.path, "--devices", "\(devices)"]
        process.standardInput = input
        process.standardOutput = output
        process.standardError = try FileHandle(forWritingTo: errors)
        try process.run()
        let reading = output.fileHandleForReading
        let lines = self.lines
        Thread {
            var pending = Data()
            while true {
                let chunk = reading.availableData
                if chunk.isEmpty { break }
                pending += chunk
                while let newline = pending.firstIndex(of: 0x0A) {
                    let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                    pending = Data(pending[pending.index(after: newline)...])
                    lines.value.withLock { $0.append(line) }
                }
            }
        }.start()
        guard let ready = Self.nextLine(lines, after: 0, within: 300), let document = Self.object(ready), document["error"] == nil else {
            let text = (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
            Self.end(process, input: input)
            throw Failure(description: "Syncthing did not come up: \(lines.value.withLock { $0 }) \(text.suffix(2000))")
        }
        folders = document["folders"] as? [String] ?? []
        peerAddresses = (document["peerAddresses"] as? [Any] ?? []).map { $0 as? String }
        nonDefaultFolderSettingNames = document["nonDefaultFolderSettingNames"] as? [String] ?? ["unknown"]
    }

    deinit { stop() }

    private static func object(_ line: String) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
    }

    private static func nextLine(_ lines: Lines, after count: Int, within seconds: TimeInterval) -> String? {
        var found: String?
        _ = pollUntil(timeout: seconds, interval: 0.1) {
            found = lines.value.withLock { $0.count > count ? $0[count] : nil }
            return found != nil
        }
        return found
    }

    /// Per device, Syncthing's state of the folder (`state`, `needTotalItems`, `idle`); nil without an answer.
    func status() -> [[String: Any]]? {
        let count = lines.value.withLock { $0.count }
        guard process.isRunning, (try? input.fileHandleForWriting.write(contentsOf: Data("status\n".utf8))) != nil,
              let line = Self.nextLine(lines, after: count, within: 20) else { return nil }
        return Self.object(line)?["folders"] as? [[String: Any]]
    }

    private var stopped = false

    /// Ends every Syncthing (standard input closed; SIGTERM if that is not enough) and removes the folders.
    func stop() {
        guard !stopped else { return }
        stopped = true
        Self.end(process, input: input)
        if ProcessInfo.processInfo.environment["MYPASS_SYNCTHING_KEEP"] == nil { try? FileManager.default.removeItem(at: root) }
    }

    private static func end(_ process: Process, input: Pipe) {
        try? input.fileHandleForWriting.close()
        if !pollUntil(timeout: 40, interval: 0.1, { !process.isRunning }) {
            kill(process.processIdentifier, SIGTERM)
            if !pollUntil(timeout: 20, interval: 0.1, { !process.isRunning }) { kill(process.processIdentifier, SIGKILL) }
        }
        process.waitUntilExit()
    }
}

extension PathTextForTests {
    /// The folder of `path`.
    static func folder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return String(path[..<slash])
    }
}

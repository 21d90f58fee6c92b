import Foundation
import KDBXFormat
import MyPassCore
import MyPassSync
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// One simulated device: a synced folder holding the vault, this device's sync state, and a
/// `mypass-sync watch --json` process on the vault (its events go to a log file).
private final class SimulatedDevice {
    let name: String
    let folder: URL
    let vault: String
    let stateDirectory: String
    let log: URL
    private let process = Process()

    init(name: String, root: URL, initialVault: String) throws {
        self.name = name
        folder = root.appendingPathComponent("folder-\(name)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        vault = DurableFile.resolvedPath(folder.appendingPathComponent("pw.kdbx").path, on: .real)
        try FileManager.default.copyItem(atPath: initialVault, toPath: vault)
        stateDirectory = root.appendingPathComponent("state-\(name)").path
        log = root.appendingPathComponent("watch-\(name).log")
        FileManager.default.createFile(atPath: log.path, contents: nil)
        process.executableURL = try ToolRunner.binary()
        process.arguments = ["watch", "--json", "--debounce", "0.05", "--password-stdin", "--state-dir", stateDirectory, vault]
        let input = Pipe()
        process.standardInput = input
        let logHandle = try FileHandle(forWritingTo: log)
        process.standardOutput = logHandle
        process.standardError = logHandle
        try process.run()
        input.fileHandleForWriting.write(Data((TwoDeviceSimulationTests.password + "\n").utf8))
        try input.fileHandleForWriting.close()
    }

    var isRunning: Bool { process.isRunning }

    /// The watcher has taken in the file as it is now (its recorded base is these bytes) and no
    /// conflict copy waits beside it.
    func isSettled() -> Bool {
        guard let bytes = try? Data(contentsOf: URL(fileURLWithPath: vault)),
              let recorded = SyncStateStore(directory: stateDirectory).base(for: vault)?.bytes else { return false }
        return recorded == bytes && conflictCopies().isEmpty
    }

    func conflictCopies() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter {
            ConflictCopies.engine(ofName: $0, forVaultNamed: "pw.kdbx") != nil
        }
    }

    /// The copies this device's watcher merged or retired (kept in its state directory).
    func retiredCopies() -> [String] {
        RetiredCopies(state: SyncStateStore(directory: stateDirectory), vaultPath: vault).list().map(\.originalName)
    }

    /// Where each thread of the watcher is (for a watcher that stopped settling): each thread's name,
    /// state and kernel wait channel, and its stack when gdb is installed.
    func threadReport() -> String {
        let pid = process.processIdentifier
        let taskFolder = "/proc/\(pid)/task"
        var lines: [String] = []
        for task in ((try? FileManager.default.contentsOfDirectory(atPath: taskFolder)) ?? []).sorted() {
            func read(_ name: String) -> String {
                ((try? String(contentsOfFile: "\(taskFolder)/\(task)/\(name)", encoding: .utf8)) ?? "?").trimmingCharacters(in: .whitespacesAndNewlines)
            }
            lines.append("\(name) thread \(task) \(read("comm")): wchan \(read("wchan")), state \(read("stat").split(separator: " ").dropFirst(2).first ?? "?")")
        }
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/gdb"),
           let stacks = try? ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/timeout"),
                                               ["60", "/usr/bin/gdb", "-batch", "-p", "\(pid)", "-ex", "thread apply all bt 30"]) {
            lines.append(stacks.output)
        }
        return lines.joined(separator: "\n")
    }

    /// Stops the watcher (SIGINT) and returns its events.
    func stop() -> [[String: Any]] {
        kill(process.processIdentifier, SIGINT)
        process.waitUntilExit()
        let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }
}

/// The file syncing between the two folders, as Syncthing does it where it matters here (and with
/// Dropbox's and Nextcloud's names in turn, whose copies must live the same life): the newer vault is
/// copied across by atomic rename from the engine's temporary file (`.syncthing.NAME.tmp`,
/// Nextcloud's `.NAME.~RANDOM`, Dropbox's own `.dropbox.cache` folder); when both changed since the
/// last sync, the older one is kept as a conflict copy (`pw.sync-conflict-YYYYMMDD-HHMMSS-DEVICE.kdbx`,
/// `pw (laptop's conflicted copy 2026-11-29).kdbx`, `pw (conflicted copy 2026-11-29 HHMMSS).kdbx`)
/// on the device that had it, and that copy is synced to the other device too, so both watchers can
/// act on the same copy. Copies that appeared on one side are shipped to the other; a copy removed on
/// one side (retired by its watcher) is removed on the other a little later, the delay a deletion takes.
private struct FolderSync {
    private var lastSynced: Data
    /// Conflict copies both folders held after the last pass.
    private var syncedCopies: Set<String> = []
    /// Conflicts between two vaults of the same content (made by two devices rewriting one merge).
    private(set) var echoCopies = 0
    let key: CompositeKey

    init(initial: Data, key: CompositeKey) {
        lastSynced = initial
        self.key = key
    }

    /// One sync pass; returns whether a conflict copy was made.
    mutating func run(_ first: SimulatedDevice, _ second: SimulatedDevice, copyNumber: Int) throws -> Bool {
        let conflict = try syncVault(first, second, copyNumber: copyNumber)
        try syncCopies(first, second)
        return conflict
    }

    private mutating func syncVault(_ first: SimulatedDevice, _ second: SimulatedDevice, copyNumber: Int) throws -> Bool {
        let firstBytes = try Data(contentsOf: URL(fileURLWithPath: first.vault))
        let secondBytes = try Data(contentsOf: URL(fileURLWithPath: second.vault))
        if firstBytes == secondBytes {
            lastSynced = firstBytes
            return false
        }
        let firstChanged = firstBytes != lastSynced, secondChanged = secondBytes != lastSynced
        if firstChanged && secondChanged {
            if try KDBXReader.open(firstBytes, key: key).vault == KDBXReader.open(secondBytes, key: key).vault { echoCopies += 1 }
            let firstNewer = modificationTime(first.vault) >= modificationTime(second.vault)
            let (winner, winnerBytes, loser) = firstNewer ? (first, firstBytes, second) : (second, secondBytes, first)
            let copy = loser.folder.appendingPathComponent(Self.copyName(copyNumber, device: loser.name)).path
            #expect(rename(loser.vault, copy) == 0)
            try place(winnerBytes, named: "pw.kdbx", at: loser)
            lastSynced = winnerBytes
            return true
        }
        if firstChanged {
            try place(firstBytes, named: "pw.kdbx", at: second)
            lastSynced = firstBytes
        } else {
            try place(secondBytes, named: "pw.kdbx", at: first)
            lastSynced = secondBytes
        }
        return false
    }

    /// New copies go across; copies gone on one side (retired there) go on the other.
    mutating func syncCopies(_ first: SimulatedDevice, _ second: SimulatedDevice) throws {
        let firstCopies = Set(first.conflictCopies()), secondCopies = Set(second.conflictCopies())
        for (from, to, here, there) in [(first, second, firstCopies, secondCopies), (second, first, secondCopies, firstCopies)] {
            for name in here.subtracting(there) {
                if syncedCopies.contains(name) {
                    _ = unlink(from.folder.appendingPathComponent(name).path)  // removed on the other device
                } else if let bytes = try? Data(contentsOf: from.folder.appendingPathComponent(name)) {
                    try place(bytes, named: name, at: to)
                }
            }
        }
        syncedCopies = Set(first.conflictCopies()).intersection(second.conflictCopies())
    }

    /// The `number`-th conflict copy's name: Syncthing's, Dropbox's and Nextcloud's in turn.
    static func copyName(_ number: Int, device: String) -> String {
        switch number % 3 {
        case 0: String(format: "pw.sync-conflict-20261129-%06d-%@SIM.kdbx", number, device.prefix(4).uppercased())
        case 1: "pw (\(device)'s conflicted copy 2026-11-29 \(number)).kdbx"
        default: String(format: "pw (conflicted copy 2026-11-29 %06d).kdbx", number)
        }
    }

    /// Writes `bytes` under a sync engine's temporary name (by the kind of `name`, else in turn) and
    /// renames it to `name`.
    private func place(_ bytes: Data, named name: String, at device: SimulatedDevice) throws {
        let temporary: String
        switch ConflictCopies.engine(ofName: name, forVaultNamed: "pw.kdbx") ?? [.syncthing, .nextcloud, .dropbox][bytes.count % 3] {
        case .nextcloud: temporary = device.folder.appendingPathComponent(".\(name).~\(String(bytes.count, radix: 16))").path
        case .dropbox, .onedrive:
            let cache = device.folder.appendingPathComponent(".dropbox.cache")
            try FileManager.default.createDirectory(at: cache, withIntermediateDirectories: true)
            temporary = cache.appendingPathComponent(name).path
        case .syncthing: temporary = device.folder.appendingPathComponent(".syncthing.\(name).tmp").path
        default:  // the other engines (their own temporaries or none): a hidden partial file
            temporary = device.folder.appendingPathComponent(".\(name).partial").path
        }
        try bytes.write(to: URL(fileURLWithPath: temporary))
        #expect(rename(temporary, device.folder.appendingPathComponent(name).path) == 0)
    }

    private func modificationTime(_ path: String) -> Double {
        var info = stat()
        stat(path, &info)
        return Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9
    }
}

@Suite("two devices syncing one vault, each with its own watcher", .serialized)
struct TwoDeviceSimulationTests {
    static let password = CLIFixtures.kdbx31Password

    @Test("random edits on both devices (mypass-sync and keepassxc-cli), synced with conflict copies: both end equal, nothing lost")
    func simulation() throws {
        let environment = ProcessInfo.processInfo.environment
        let rounds = Int(environment["MYPASS_SIMULATION_ROUNDS"] ?? "") ?? 150
        // Seeded, so a failing run can be repeated (`MYPASS_SIMULATION_SEED`).
        var random = SeededRandom(seed: UInt64(environment["MYPASS_SIMULATION_SEED"] ?? "") ?? 20_261_129)
        let root = try CLIFixtures.scratch()
        let keep = environment["MYPASS_SIMULATION_KEEP"] != nil  // Leaves the folders, logs and actions for a look.
        defer { if !keep { try? FileManager.default.removeItem(at: root) } }
        FileManager.default.createFile(atPath: root.appendingPathComponent("actions.log").path, contents: nil)
        let actions = try FileHandle(forWritingTo: root.appendingPathComponent("actions.log"))
        func note(_ line: String) { actions.write(Data("\(Date().timeIntervalSince1970) \(line)\n".utf8)) }
        let devices = [try SimulatedDevice(name: "laptop", root: root, initialVault: CLIFixtures.kdbx31),
                       try SimulatedDevice(name: "phone", root: root, initialVault: CLIFixtures.kdbx31)]
        defer { for device in devices where device.isRunning { _ = device.stop() } }  // Never leave a watcher behind.
        let key = try CompositeKey(password: Self.password)
        var sync = FolderSync(initial: try Data(contentsOf: URL(fileURLWithPath: devices[0].vault)), key: key)
        var derived: DerivedKey?
        /// Titles of the entries directly in the root group of a device's vault now.
        func rootTitles(_ device: SimulatedDevice) throws -> [String] {
            let opened = try KDBXReader.open(Data(contentsOf: URL(fileURLWithPath: device.vault)), key: key, cachedKey: derived)
            derived = opened.derivedKey
            return opened.vault.root.entries.map(\.title)
        }
        /// Waits until both watchers have taken in their files and no copy is left; meanwhile copies
        /// and their deletions keep propagating every half second, as the sync engine would.
        func waitUntilSettled() throws {
            var lastPropagation = Date()
            // Ends when both are settled, or (a failure, below) when a watcher ended or 120 s passed
            // (bounded generously: with both cores busy a round's merges take many times their usual time).
            _ = try pollUntil(timeout: 120, interval: 0.02) {
                if devices.allSatisfy({ $0.isSettled() }) { return true }
                if Date().timeIntervalSince(lastPropagation) > 0.5 {
                    try sync.syncCopies(devices[0], devices[1])
                    lastPropagation = Date()
                }
                return !devices.allSatisfy(\.isRunning)
            }
            guard devices.allSatisfy({ $0.isSettled() }) else {
                let states = devices.map { device in
                    let tail = ((try? String(contentsOf: device.log, encoding: .utf8)) ?? "").split(separator: "\n").suffix(3)
                    return "\(device.name): settled \(device.isSettled()), running \(device.isRunning), copies \(device.conflictCopies()), last events \(tail)"
                }
                // Where the watchers are, for whoever reads the log (a watcher that stops settling is a bug).
                for device in devices where device.isRunning { print("threads of \(device.name)'s watcher:\n\(device.threadReport())") }
                Issue.record("the watchers did not settle (their threads are printed above): \(states)")
                throw CancellationError()
            }
        }
        try waitUntilSettled()

        var written: [String: [String]] = [:]  // title -> every value set on it (user name, URL, notes)
        /// Each value set, with the period between two moments where both folders held the same file.
        var edits: [(title: String, field: String, value: String, device: String, epoch: Int)] = []
        var epoch = 0
        var editsPerEntry: [String: Int] = [:]
        var counter = 0, conflictCopies = 0, keepassxcEdits = 0, ourEdits = 0
        for round in 0..<rounds {
            for device in devices where Bool.random(using: &random) || round % 7 == 0 {
                counter += 1
                let value = "\(device.name)-r\(round)-v\(counter)"
                // A small working set (the newest editable entries), so that both devices often edit
                // the same entries between two syncs.
                let editable = Array(try rootTitles(device).filter { (editsPerEntry[$0] ?? 99) < 4 }.suffix(3))
                let useKeePassXC = Int.random(in: 0..<10, using: &random) < 3
                var arguments: [String]
                let title: String
                if editable.count < 2 || Int.random(in: 0..<5, using: &random) == 0 {
                    title = "E\(counter)-\(device.name)"
                    arguments = ["add", device.vault, title, "-u", value]
                    editsPerEntry[title] = 0
                    edits.append((title, "UserName", value, device.name, epoch))
                } else if !useKeePassXC && Int.random(in: 0..<25, using: &random) == 0 {
                    title = editable.randomElement(using: &random)!
                    arguments = ["rm", device.vault, title]
                    editsPerEntry[title] = 99
                } else {
                    title = editable.randomElement(using: &random)!
                    let option = ["-u", "--url", "--notes"].randomElement(using: &random)!
                    arguments = ["edit", device.vault, title, option, value]
                    editsPerEntry[title, default: 0] += 1
                    edits.append((title, ["-u": "UserName", "--url": "URL", "--notes": "Notes"][option]!, value, device.name, epoch))
                }
                if arguments[0] != "rm" { written[title, default: []].append(value) }
                note("round \(round) \(device.name) \(useKeePassXC ? "keepassxc-cli" : "mypass-sync") \(arguments.dropFirst(2).joined(separator: " "))")
                if useKeePassXC {
                    keepassxcEdits += 1
                    let result = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"),
                                                       ["keepassxc-cli", arguments[0], "-q"] + arguments.dropFirst(),
                                                       input: Data((Self.password + "\n").utf8), environment: ["QT_QPA_PLATFORM": "offscreen"])
                    #expect(result.status == 0, "keepassxc-cli \(arguments[0]) on \(device.name): \(result.standardError)")
                } else {
                    ourEdits += 1
                    let result = try ToolRunner.run([arguments[0], "--password-stdin", "--state-dir", device.stateDirectory] + arguments.dropFirst(),
                                                    input: Self.password + "\n")
                    #expect(result.status == 0, "mypass-sync \(arguments[0]) on \(device.name): \(result.standardError)")
                }
            }
            try waitUntilSettled()
            if Int.random(in: 0..<10, using: &random) < 6 {
                let conflict = try sync.run(devices[0], devices[1], copyNumber: round)
                if conflict { conflictCopies += 1 }
                try waitUntilSettled()
                note("sync after round \(round)\(conflict ? " (conflict copy)" : "")")
                if try Data(contentsOf: URL(fileURLWithPath: devices[0].vault)) == Data(contentsOf: URL(fileURLWithPath: devices[1].vault)) {
                    epoch += 1
                }
            }
        }
        // Sync until both folders hold the same file.
        for pass in 0..<6 {
            let same = try Data(contentsOf: URL(fileURLWithPath: devices[0].vault)) == Data(contentsOf: URL(fileURLWithPath: devices[1].vault))
            if same { break }
            if try sync.run(devices[0], devices[1], copyNumber: rounds + pass) { conflictCopies += 1 }
            try waitUntilSettled()
        }
        let events = devices.flatMap { $0.stop() }
        let finals = try devices.map { try Data(contentsOf: URL(fileURLWithPath: $0.vault)) }
        #expect(finals[0] == finals[1], "the two folders do not hold the same vault")
        let merged = try KDBXReader.open(finals[0], key: key).vault

        // Every value ever set is the current one or in the entry's history.
        var missing: [String] = []
        for (title, values) in written {
            let versions = merged.root.allEntries().map(\.entry).filter { $0.title == title }.flatMap { [$0] + $0.history }
            if versions.isEmpty { missing.append("\(title): entry gone"); continue }
            let seen = Set(versions.flatMap { [$0.text("UserName"), $0.text("URL"), $0.text("Notes")] })
            for value in values where !seen.contains(value) { missing.append("\(title): \(value)") }
        }
        #expect(missing.isEmpty, "lost edits: \(missing.prefix(10))")
        // Field-level merge: a field's last edit is current unless the other device edited the same
        // field in the same period (then one of the two devices' last values is, the other in history).
        var notCurrent: [String] = []
        for (key, fieldEdits) in Dictionary(grouping: edits, by: { "\($0.title)|\($0.field)" }) {
            let lastEpoch = fieldEdits.map(\.epoch).max()!
            let lastValues = Set(Dictionary(grouping: fieldEdits.filter { $0.epoch == lastEpoch }, by: \.device).values.map { $0.last!.value })
            let (title, field) = (fieldEdits[0].title, fieldEdits[0].field)
            guard let entry = merged.root.allEntries().map(\.entry).first(where: { $0.title == title }) else { continue }
            if !lastValues.contains(entry.text(field)) {
                let versions = ([entry] + entry.history).map { "\($0.times.lastModified) u=\($0.text("UserName")) url=\($0.text("URL")) n=\($0.text("Notes"))" }
                notCurrent.append("\(key): \(entry.text(field)) not in \(lastValues); versions \(versions)")
            }
        }
        #expect(notCurrent.isEmpty, "edits not current: \(notCurrent.prefix(10))")
        let kinds = events.compactMap { $0["kind"] as? String }
        #expect(!kinds.contains("error") && !kinds.contains("refused") && !kinds.contains("unreadable"),
                "watcher problems: \(events.filter { ["error", "refused", "unreadable"].contains($0["kind"] as? String ?? "") })")
        // The run exercised what it claims to: both tools, conflict copies merged and moved aside.
        #expect(keepassxcEdits > rounds / 10 && ourEdits > rounds / 2)
        #expect(conflictCopies >= 5, "only \(conflictCopies) conflict copies in \(rounds) rounds")
        // Every copy was handled (merged, or retired as carrying nothing new) and kept by a device
        // that handled it; none is left in a folder; and no storm: a copy made of two rewrites of the
        // same merge carried nothing new, and its retirement writes nothing, so it makes no further copy.
        let handledEvents = events.filter { ["conflictCopyMerged", "conflictCopyRetired"].contains($0["kind"] as? String ?? "") }
        let handled = Set(handledEvents.compactMap { ($0["detail"] as? String)?.components(separatedBy: " -> ").first }
            .map { ($0 as NSString).lastPathComponent })
        #expect(devices.allSatisfy { !$0.retiredCopies().isEmpty }, "a device kept no retired copy")
        #expect(handled.count == conflictCopies, "\(handled.count) copies handled of \(conflictCopies)")
        #expect(devices.allSatisfy { $0.conflictCopies().isEmpty })
        #expect(kinds.filter { $0 == "conflictCopyMerged" || $0 == "conflictCopyRetired" }.count >= conflictCopies)
        #expect(sync.echoCopies <= conflictCopies - sync.echoCopies, "\(sync.echoCopies) of \(conflictCopies) copies were echoes of one merge")
        #expect(kinds.contains("ownWriteIgnored"))
        if keep { print("simulation folders kept in \(root.path)") }
        print("simulation: \(rounds) rounds, \(ourEdits) mypass-sync edits, \(keepassxcEdits) keepassxc-cli edits, \(conflictCopies) conflict copies (\(sync.echoCopies) of them echoes of one merge written by both devices), \(written.count) entries")
    }
}

import Foundation
import KDBXFormat
import MyPassCore
import MyPassMerge
@testable import SyncCommit
@testable import SyncFiles
@testable import SyncState
@testable import SyncWatch
import Synchronization
import Testing
import TestSupport

/// N devices (2 and 3) whose folders a `SyncthingModel` keeps in step, a `VaultWatcher` on each,
/// and random rounds of edits on one, two or all devices at once, on a clock the test advances:
/// seeded, replayable (`MYPASS_DEVICE_SIMULATION_SEED`, `..._ROUNDS`), no sleeps. Every schedule
/// must end with every device holding the same vault, every value ever set current or in history,
/// no write whose content equals what it replaced, no empty restore or merge, a bounded number of
/// copies, and a folder that goes quiet.
@Suite("simulated devices over a model of Syncthing: random schedules settle and lose nothing", .serialized)
struct DeviceSimulationTests {
    private static let key = try! CompositeKey(password: "simulation")
    private static let epoch = Date(timeIntervalSince1970: 1_796_160_000)
    /// The watch engine's defaults: debounce, retry after a wait, the rollback hold.
    private static let debounce = 0.3, retryWait = 1.0, rollbackHold = 20.0

    /// Thread-safe list of the events of one device's watcher.
    private final class EventLog: Sendable {
        private struct State {
            var events: [(time: Double, event: WatchEvent)] = []
            var now: Double = 0
        }
        private let state = Mutex(State())
        /// The simulated time the next events are logged at.
        var now: Double {
            get { state.withLock { $0.now } }
            set { state.withLock { $0.now = newValue } }
        }
        func add(_ event: WatchEvent) { state.withLock { $0.events.append(($0.now, event)) } }
        var all: [(time: Double, event: WatchEvent)] { state.withLock { $0.events } }
    }

    /// One simulated device.
    private final class Device {
        let index: Int
        let folder: URL
        let vaultPath: String
        let state: SyncStateStore
        let watcher: VaultWatcher
        let log = EventLog()
        var checkDue: Double?
        var writes = 0

        init(index: Int, root: URL, vault: Data) throws {
            self.index = index
            folder = root.appendingPathComponent("folder-\(index)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            vaultPath = DurableFile.resolvedPath(folder.appendingPathComponent("vault.kdbx").path, on: .real)
            try vault.write(to: URL(fileURLWithPath: vaultPath))
            state = SyncStateStore(directory: root.appendingPathComponent("state-\(index)").path)
            let log = self.log
            watcher = VaultWatcher(context: VaultContext(path: vaultPath, key: DeviceSimulationTests.key, state: state, settings: DeviceSettings()),
                                   policy: Reconciler.Policy(rollbackHold: DeviceSimulationTests.rollbackHold)) { log.add($0) }
        }

        /// The folder's files and their hashes (what a write changes).
        func listing() -> [String: Data] {
            var files: [String: Data] = [:]
            for name in (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [] {
                files[name] = FileManager.default.contents(atPath: folder.appendingPathComponent(name).path)
            }
            return files
        }
    }

    /// One value set by an edit.
    private struct SetValue {
        let time: Double
        let device: Int
        let title: String
        let field: String
        let value: String
    }

    private static func initialVault() throws -> Data {
        let start = Timestamp(unixSeconds: 1_796_000_000)
        var vault = Vault.empty(name: "simulation", at: start)
        // Unlimited history: a value is lost only if the sync loses it, never to the item limit.
        vault.meta.historyMaxItems = -1
        vault.meta.historyMaxSize = -1
        for title in ["E1", "E2", "E3", "E4"] {
            vault = try vault.addingEntry(title: title, userName: "u", url: "https://\(title.lowercased()).example", to: vault.root.uuid, at: start).vault
        }
        let settings = FormatSettings(version: .v4_0, cipher: .chaCha20, kdf: .aesKDF(seed: Data(repeating: 7, count: 32), rounds: 10))
        return try KDBXWriter.serialize(vault, settings: settings, key: key).file
    }

    /// Whether `vault` holds `value` as a current value or in the entry's history.
    private static func holds(_ vault: Vault, _ value: SetValue) -> Bool {
        vault.root.allEntries().map(\.entry).filter { $0.title == value.title }.flatMap { [$0] + $0.history }
            .contains { $0.text(value.field) == value.value }
    }

    /// The outcome of one run, for the checks and the figures.
    private struct Run {
        var values: [SetValue] = []
        var editRounds = 0
        var concurrentEditors = 0
        var emptyWrites: [String] = []
        var droppedByWrites: [String] = []
        var emptyEvents: [String] = []
        var lastEdit: Double = 0
        var lastCopy: Double = 0
        var lastWrite: Double = 0
        var settledAt: Double = 0
    }

    /// Runs `rounds` rounds on `count` devices whose model scans `scanDelay` after a change.
    private func simulate(devices count: Int, scanDelay: Double, rounds: Int, seed: UInt64, offline: Bool = false) throws -> (Run, [URL], SyncthingModel, [Device]) {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("mypass-simulation-\(UUID().uuidString)")
        let initial = try Self.initialVault()
        let devices = try (0..<count).map { try Device(index: $0, root: root, vault: initial) }
        let model = SyncthingModel(folders: devices.map(\.folder), scanDelay: scanDelay)
        model.startInStep()
        model.onFolderChange = { index in
            let device = devices[index]
            device.checkDue = min(device.checkDue ?? .infinity, model.now + Self.debounce)
        }
        var random = SeededRandom(seed: seed)
        var run = Run()
        var now = 0.0

        /// Runs one device's watcher check at `now`; a write it made is a local change to the model.
        func check(_ device: Device) throws {
            device.checkDue = nil
            device.log.now = now
            let before = device.listing()
            let beforeVault = before["vault.kdbx"]
            let settled = device.watcher.check(now: Self.epoch.addingTimeInterval(now))
            let after = device.listing()
            if before != after {
                model.noticeLocalChange(on: device.index)
                if let old = beforeVault, let new = after["vault.kdbx"], old != new {
                    device.writes += 1
                    run.lastWrite = now
                    let oldVault = try KDBXReader.open(old, key: Self.key).vault, newVault = try KDBXReader.open(new, key: Self.key).vault
                    if VaultDiff.sameContent(oldVault, newVault) { run.emptyWrites.append("device \(device.index) at \(now)") }
                    let dropped = run.values.filter { Self.holds(oldVault, $0) && !Self.holds(newVault, $0) }
                    if !dropped.isEmpty {
                        run.droppedByWrites.append("device \(device.index) at \(now) dropped \(dropped.map { "\($0.title) \($0.field) \($0.value)" })")
                        if let dump = ProcessInfo.processInfo.environment["MYPASS_DEVICE_SIMULATION_DUMP"] {
                            for (name, bytes) in before { try? bytes.write(to: URL(fileURLWithPath: dump + "/before-\(name)")) }
                            for (name, bytes) in after { try? bytes.write(to: URL(fileURLWithPath: dump + "/after-\(name)")) }
                            if let base = device.state.base(for: device.vaultPath) { try? base.bytes.write(to: URL(fileURLWithPath: dump + "/base.kdbx")) }
                        }
                    }
                }
                device.checkDue = now + Self.debounce  // its own inotify event
            }
            if !settled { device.checkDue = min(device.checkDue ?? .infinity, now + Self.retryWait) }
        }

        /// Runs the model and the watchers up to `time`.
        func advance(to time: Double) throws {
            while true {
                let nextCheck = devices.compactMap(\.checkDue).min() ?? .infinity
                let nextModel = model.nextEvent ?? .infinity
                let next = min(nextCheck, nextModel)
                guard next <= time else { break }
                now = max(now, next)
                if nextModel <= nextCheck {
                    model.advance(to: now)
                } else if let device = devices.first(where: { $0.checkDue == nextCheck }) {
                    try check(device)
                }
            }
            now = max(now, time)
            model.advance(to: now)
        }

        for device in devices { try check(device) }
        let fields = ["URL", "UserName", "Notes"]
        for round in 1...rounds {
            try advance(to: now + Double(random.next() % 40) / 4)  // 0 to 10 s between rounds
            if offline && round == rounds / 2 { model.takeOffline(count - 1, until: now + 30) }
            let editors = Int(random.next() % UInt64(count)) + 1
            var chosen = Array(0..<count)
            chosen.shuffle(using: &random)
            run.editRounds += 1
            run.concurrentEditors += editors - 1
            for index in chosen.prefix(editors) {
                let device = devices[index]
                let session = try SyncSession(path: device.vaultPath, key: Self.key, state: device.state, settings: DeviceSettings())
                let value = "d\(index)-r\(round)"
                if random.next() % 5 == 0 {
                    let title = "N-\(value)"
                    session.update(try session.vault.addingEntry(title: title, userName: value, to: session.vault.root.uuid,
                                                                at: Timestamp(unixSeconds: 1_796_160_000 + Int64(now))).vault)
                    run.values.append(SetValue(time: now, device: index, title: title, field: "UserName", value: value))
                } else {
                    let title = ["E1", "E2", "E3", "E4"][Int(random.next() % 4)], field = fields[Int(random.next() % 3)]
                    let entry = session.vault.root.allEntries().first { $0.entry.title == title }!.entry
                    session.update(try session.vault.updatingEntry(entry.uuid, at: Timestamp(unixSeconds: 1_796_160_000 + Int64(now))) {
                        $0.setField(field, FieldValue(value, isProtected: false))
                    })
                    run.values.append(SetValue(time: now, device: index, title: title, field: field, value: value))
                }
                _ = try session.saveMerging()
                model.noticeLocalChange(on: index, byUser: true)
                device.checkDue = now + Self.debounce
            }
            run.lastEdit = now
        }
        // Let everything settle: no pending scan or pull, no check due, for a long while.
        let limit = now + 600
        while now < limit {
            let next = min(devices.compactMap(\.checkDue).min() ?? .infinity, model.nextEvent ?? .infinity)
            if next == .infinity { break }
            try advance(to: next)
        }
        run.settledAt = now
        run.lastCopy = model.conflicts.map(\.time).max() ?? 0
        for device in devices {
            for (time, event) in device.log.all {
                switch event {
                case .restored(_, let changes) where changes.isEmpty: run.emptyEvents.append("device \(device.index) restored [] at \(time)")
                case .conflictCopyMerged(_, let copy, _, let changes, _) where changes.isEmpty:
                    run.emptyEvents.append("device \(device.index) merged \(copy) with no changes at \(time)")
                default: break
                }
            }
        }
        return (run, devices.map(\.folder), model, devices)
    }

    /// The properties every schedule must keep.
    private func expectSettled(_ run: Run, _ folders: [URL], _ model: SyncthingModel, _ devices: [Device], scanDelay: Double, label: String) throws {
        defer { try? FileManager.default.removeItem(at: folders[0].deletingLastPathComponent()) }
        let vaults = try folders.map { try Data(contentsOf: $0.appendingPathComponent("vault.kdbx")) }
        #expect(Set(vaults).count == 1, "\(label): the devices do not hold the same vault")
        let leftovers = folders.flatMap { folder in
            ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter { $0 != "vault.kdbx" }
        }
        #expect(leftovers.isEmpty, "\(label): left in the folders: \(leftovers)")
        let vault = try KDBXReader.open(vaults[0], key: Self.key).vault
        let missing = run.values.filter { value in
            !vault.root.allEntries().map(\.entry).filter { $0.title == value.title }.flatMap { [$0] + $0.history }
                .contains { $0.text(value.field) == value.value }
        }
        if !missing.isEmpty || ProcessInfo.processInfo.environment["MYPASS_DEVICE_SIMULATION_TRACE"] != nil {
            let events = devices.flatMap { device in device.log.all.map { (time: $0.time, line: "\(device.index) \($0.event.kind) \($0.event.detail) \($0.event.changes.map { "\($0.kind) \($0.title) \($0.fields)" })") } }
            let copies = model.conflicts.map { (time: $0.time, line: "model: device \($0.device) conflict -> \($0.copy)") }
            let edits = run.values.map { (time: $0.time, line: "edit: device \($0.device) \($0.title) \($0.field) = \($0.value)") }
            for item in (events + copies + edits).sorted(by: { $0.time < $1.time }) { print(String(format: "%8.2f ", item.time) + item.line) }
        }
        #expect(missing.isEmpty, "\(label): values lost: \(missing.map { "\($0.title) \($0.field) \($0.value)" }); copies \(model.conflicts.map(\.copy)), overwritten \(model.copiesOverwritten)")
        #expect(run.droppedByWrites.isEmpty, "\(label): watcher writes dropped values: \(run.droppedByWrites)")
        #expect(run.emptyWrites.isEmpty, "\(label): writes whose content equals what they replaced: \(run.emptyWrites)")
        #expect(run.emptyEvents.isEmpty, "\(label): \(run.emptyEvents)")
        // A real conflict (a person's edit on either side) may cause one more: two watchers writing
        // the same merge at once. More than that is a storm.
        let real = model.conflicts.filter(\.real).count, extra = model.conflicts.count - real
        #expect(extra <= real, "\(label): \(extra) copies between watchers' merges for \(real) real conflicts")
        // Quiet: the last write comes within a scan, a pull, a debounce and a retry of the last copy or edit.
        let bound = max(run.lastCopy, run.lastEdit) + 2 * (scanDelay + model.latency + Self.debounce + Self.retryWait) + 1
        #expect(run.lastWrite <= bound, "\(label): a write at \(run.lastWrite) s, after the last copy (\(run.lastCopy) s) and edit (\(run.lastEdit) s)")
        print("""
            simulation \(label): \(run.values.count) values in \(run.editRounds) rounds (\(run.concurrentEditors) concurrent edits), \
            \(model.conflicts.count) copies (\(model.conflicts.filter(\.real).count) real conflicts, \(model.copiesOverwritten.count) overwritten by a same-named copy), watcher writes \
            \(devices.map(\.writes)), last edit \(run.lastEdit) s, last copy \(run.lastCopy) s, last write \(run.lastWrite) s, settled \(run.settledAt) s
            """)
    }

    private static var seed: UInt64 { UInt64(ProcessInfo.processInfo.environment["MYPASS_DEVICE_SIMULATION_SEED"] ?? "") ?? 20_261_202 }
    private static var rounds: Int { Int(ProcessInfo.processInfo.environment["MYPASS_DEVICE_SIMULATION_ROUNDS"] ?? "") ?? 25 }

    @Test("two and three devices, Syncthing's default scan delay (10 s) and a short one (1 s), random rounds", arguments: [
        (2, 10.0), (2, 1.0), (3, 10.0), (3, 1.0),
    ])
    func randomSchedules(devices: Int, scanDelay: Double) throws {
        for offset in 0..<3 {
            let seed = Self.seed &+ UInt64(offset)
            let (run, folders, model, simulated) = try simulate(devices: devices, scanDelay: scanDelay, rounds: Self.rounds, seed: seed)
            try expectSettled(run, folders, model, simulated, scanDelay: scanDelay,
                              label: "\(devices) devices, scan delay \(scanDelay) s, seed \(seed)")
        }
    }

    @Test("three devices, one of them offline for 30 s in the middle: it catches up, nothing lost")
    func offlineDevice() throws {
        let (run, folders, model, simulated) = try simulate(devices: 3, scanDelay: 10, rounds: Self.rounds, seed: Self.seed, offline: true)
        try expectSettled(run, folders, model, simulated, scanDelay: 10, label: "3 devices, one offline")
    }

    /// The model against what the real Syncthing did (`RealSyncthingTests`, three devices at the
    /// default delay, all three changing one password at once): one device's version wins everywhere,
    /// each other device renames its own version aside under the winner's ID, and two copies made in
    /// the same second have the same name — one of them is lost to the other.
    @Test("the model does what real Syncthing did when three devices changed the vault at once")
    func modelMatchesRealSyncthing() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("mypass-model-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let folders = (0..<3).map { root.appendingPathComponent("folder-\($0)") }
        for (index, folder) in folders.enumerated() {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data("version 0".utf8).write(to: folder.appendingPathComponent("vault.kdbx"))
            _ = index
        }
        let model = SyncthingModel(folders: folders, scanDelay: 10)
        model.startInStep()
        for (index, folder) in folders.enumerated() {
            try Data("edited on \(index)".utf8).write(to: folder.appendingPathComponent("vault.kdbx"))
            model.noticeLocalChange(on: index, byUser: true)
        }
        model.advance(to: 60)
        let vaults = try folders.map { try Data(contentsOf: $0.appendingPathComponent("vault.kdbx")) }
        #expect(Set(vaults).count == 1, "one version wins everywhere")
        #expect(model.conflicts.count == 2, "\(model.conflicts.map(\.copy))")
        let winner = String(decoding: vaults[0], as: UTF8.self)
        let winnerID = model.devices[Int(String(winner.last!))!].id
        #expect(model.conflicts.allSatisfy { $0.copy.hasSuffix("-\(winnerID).kdbx") }, "copies are named after the winner")
        #expect(Set(model.conflicts.map(\.copy)).count == 1, "made in the same second: the same name")
        #expect(!model.copiesOverwritten.isEmpty, "one of the two same-named copies is lost to the other")
        let copies = Set(folders.flatMap { folder in
            ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter { $0.contains(".sync-conflict-") }
                .map { try? Data(contentsOf: folder.appendingPathComponent($0)) }
        })
        #expect(copies.count == 1, "every device ends with the same one copy: \(copies.count)")
    }
}

import Foundation
import KDBXFormat
import MyPassCore
import MyPassMerge
import MyPassSync
import Synchronization

/// `mypass-bench watch [N]`: reaction time of the watcher to a sync-conflict copy arriving by atomic
/// rename next to an N-entry vault (cheap KDF), as `watch` reacts: the copy's event starts opening it
/// (`prepare`), the 300 ms debounce passes, then the check merges the copy and writes the vault.
/// Reported: the time from the rename to the merged vault renamed in, less the debounce.
func runWatchBenchmark(entries: Int) throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("mypass-bench-watch-\(getpid())")
    try? FileManager.default.removeItem(at: directory)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let key = try CompositeKey(password: "bench")
    let settings = FormatSettings(version: .v4_0, cipher: .aes256, kdf: .aesKDF(seed: Data(repeating: 1, count: 32), rounds: 1000))
    let vault = makeBenchmarkVault(entries: entries)
    let vaultPath = directory.appendingPathComponent("pw.kdbx").path
    let (file, _) = try KDBXWriter.serialize(vault, settings: settings, key: key)
    try file.write(to: URL(fileURLWithPath: vaultPath))
    let state = SyncStateStore(directory: directory.appendingPathComponent("state").path)
    let watcher = VaultWatcher(path: vaultPath, key: key, state: state, limits: .standard, settings: DeviceSettings(), policy: .merge, copyPolicy: .merge) { _ in }
    watcher.check()
    let arrivals = watcher.copyArrivals
    let arrived = DispatchSemaphore(value: 0)
    let replaced = DispatchSemaphore(value: 0)
    let copyArrival = EventClock(), vaultReplacement = EventClock()
    let token = DirectoryEvents.instance.watch(directory.path, on: .real) { event in
        guard case .changed(_, let name) = event else { return }
        if name.contains("sync-conflict") && name.hasSuffix(".kdbx") {
            // The copy's arrival (it is later removed from the folder, not renamed within it): the
            // engine starts opening it here, on the event thread.
            copyArrival.mark()
            arrivals.prepare(copyAt: directory.appendingPathComponent(name).path)
            arrived.signal()
        } else if name == "pw.kdbx" {
            // The merged vault renamed over the file: the reaction is complete.
            vaultReplacement.mark()
            replaced.signal()
        }
    }
    usleep(300_000)
    let debounce = WatchEngine.Settings(device: DeviceSettings()).debounce
    /// Eleven copies arriving one after another, `first` numbering the first: each one's reaction.
    func reactions(first: Int) throws -> [(latency: Double, reaction: Double, check: Double)] {
    var samples: [(latency: Double, reaction: Double, check: Double)] = []
    for round in first..<(first + 11) {
        let edited = try vault.addingEntry(title: "From the other device \(round)", to: vault.root.uuid).vault
        let (copy, _) = try KDBXWriter.serialize(edited, settings: settings, key: key)
        let staging = directory.appendingPathComponent(".staging").path
        try copy.write(to: URL(fileURLWithPath: staging))
        // The previous round's vaults are freed in the background after its reaction; in `watch` the
        // debounce leaves time for that, so let it finish before the next copy arrives.
        DeferredRelease.drain()
        let start = DispatchTime.now().uptimeNanoseconds
        rename(staging, directory.appendingPathComponent(String(format: "pw.sync-conflict-20261129-12%04d-PHONE.kdbx", round)).path)
        arrived.wait()
        let latency = Double(copyArrival.last - start) / 1e9
        // The debounce, counted from the event as the engine counts it.
        let due = copyArrival.last + UInt64(debounce * 1e9)
        let now = DispatchTime.now().uptimeNanoseconds
        if due > now { usleep(useconds_t((due - now) / 1000)) }
        let (_, checkTime) = timed { watcher.check() }
        guard replaced.wait(timeout: .now() + 5) == .success else { fatalError("the watcher did not replace the vault") }
        samples.append((latency, Double(vaultReplacement.last - start) / 1e9 - debounce, checkTime))
    }
    return samples
    }
    let samples = try reactions(first: 0)
    // The same with every core kept busy by a spinning thread (another program's build, say): the
    // reaction should take proportionally longer, never stall.
    let busy = BusyFlag()
    let cores = ProcessInfo.processInfo.activeProcessorCount
    for _ in 0..<cores { Thread { while busy.isOn {} }.start() }
    let loaded = try reactions(first: 11)
    busy.stop()
    // Where the time of one check goes: the copy parsed, merged, serialized, verified by its payload digest (medians of 9).
    let copyBytes = try KDBXWriter.serialize(try vault.addingEntry(title: "Phase", to: vault.root.uuid).vault, settings: settings, key: key).file
    let copyVault = try KDBXReader.open(copyBytes, key: key).vault
    let merged = try VaultMerger.merge(base: vault, local: vault, remote: copyVault)
    let serialized = try KDBXWriter.encode(merged.vault, settings: settings, key: key)
    let copyOpen = try medianSeconds(repetitions: 9) { _ = try KDBXReader.open(copyBytes, key: key) }
    let mergeTime = try medianSeconds(repetitions: 9) { _ = try VaultMerger.merge(base: vault, local: vault, remote: copyVault) }
    let serializeTime = try medianSeconds(repetitions: 9) { _ = try KDBXWriter.serialize(merged.vault, settings: settings, key: key) }
    let verifyTime = try medianSeconds(repetitions: 9) { _ = try KDBXReader.payloadDigest(of: serialized.file, derivedKey: serialized.derivedKey) }
    print(String(format: "  phases: open copy %.1f ms, merge %.1f ms, serialize %.1f ms, verify %.1f ms (%d KB file)",
                 copyOpen * 1000, mergeTime * 1000, serializeTime * 1000, verifyTime * 1000, serialized.file.count / 1024))
    let (session, openTime) = try timed { try SyncSession(path: vaultPath, key: key, state: state, settings: DeviceSettings()) }
    let (_, saveTime) = try timed { () throws -> SyncSession.SaveOutcome in
        session.update(try session.vault.addingEntry(title: "Timing", to: session.vault.root.uuid).vault)
        return try session.save()
    }
    print(String(format: "  of which: open the vault %.1f ms, edit + verified durable save %.1f ms", openTime * 1000, saveTime * 1000))
    DirectoryEvents.instance.stopWatching(token)
    let median = samples.sorted { $0.reaction < $1.reaction }[samples.count / 2]
    let best = samples.map(\.reaction).min() ?? 0
    report("watch reaction, \(entries) entries", median.reaction,
           String(format: "after the debounce (%.0f ms): copy renamed in -> merged vault renamed over the file, less the debounce, median of %d (best %.1f ms; inotify %.1f ms; the check after the debounce with its bookkeeping %.1f ms; the copy opened during the debounce)",
                  debounce * 1000, samples.count, best * 1000, median.latency * 1000, median.check * 1000))
    let loadedMedian = loaded.sorted { $0.reaction < $1.reaction }[loaded.count / 2]
    report("watch reaction, \(entries) entries, \(cores) cores busy", loadedMedian.reaction,
           String(format: "the same with a spinning thread per core beside the watcher, median of %d (best %.1f ms; %.1fx the idle median)",
                  loaded.count, (loaded.map(\.reaction).min() ?? 0) * 1000, loadedMedian.reaction / max(median.reaction, 1e-9)))
}

/// The time of the last event, shared with the inotify thread.
private final class EventClock: Sendable {
    private let value = Atomic<UInt64>(0)
    func mark() { value.store(DispatchTime.now().uptimeNanoseconds, ordering: .releasing) }
    var last: UInt64 { value.load(ordering: .acquiring) }
}

/// Keeps the spinning threads of the loaded measurement going until `stop`.
private final class BusyFlag: Sendable {
    private let value = Atomic<Bool>(true)
    var isOn: Bool { value.load(ordering: .relaxed) }
    func stop() { value.store(false, ordering: .relaxed) }
}

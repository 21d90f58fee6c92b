import Foundation
import MyPassCrypto
@testable import SyncFiles
#if canImport(Glibc)
import Glibc
#endif

/// A model of how Syncthing moves the files of one shared folder between N devices, on a clock the
/// test advances: nothing sleeps and every run with the same seed is the same.
///
/// The rules, each seen with the real Syncthing 1.19 (`RealSyncthingTests`, `Helpers/syncthing_group.py`,
/// and the three-device case of the issue this model was written for):
/// - **Delayed scans.** A local change is noticed `scanDelay` after the first change of a quiet folder
///   (the file watcher's delay, 10 s by default), then announced with a version vector.
/// - **Pulls.** Another device takes an announced version `latency` later, through a temporary file
///   renamed in (a new inode). A version that does not dominate the local one and is not dominated
///   by it is a conflict, decided the same way on every device: the older modification time loses
///   (equal times: the device with the larger ID). Only the device whose own version lost makes a
///   copy: it renames its version aside as `NAME.sync-conflict-YYYYMMDD-HHMMSS-ID.EXT`, where ID is
///   the device that modified the winning version and the time is the moment of the pull in whole
///   seconds, takes the winner, and ships the copy like any file. Two devices that lose to the same
///   device in the same second therefore make copies of the same name.
/// - **No conflict copy of a conflict copy.** An incoming version of a copy replaces the local one
///   ("already a conflict copy; not copying again"): one of two same-named copies is lost.
/// - **Modified but not rescanned.** A pull onto a file changed locally since the last scan is
///   abandoned and tried again after the next scan, which announces the local change first.
/// - **Deletions** propagate like versions; a deletion of a file changed locally is not applied.
/// - **Offline.** A device can be offline for a while: nothing reaches it or leaves it meanwhile.
final class SyncthingModel {
    /// One announced version of a file.
    struct Version {
        /// The content (nil: deleted).
        let bytes: Data?
        /// Who changed it last (index of the device).
        let modifiedBy: Int
        /// Its modification time on the model's clock.
        let modified: Double
        /// One counter per device.
        let vector: [Int: Int]
        /// Whether a person's edit made it (else a watcher's merge).
        var byUser = false

        var sha256: String? { bytes.map { SHA256.hexHash($0) } }

        /// Whether this version includes every change `other` includes.
        func dominates(_ other: Version) -> Bool {
            other.vector.allSatisfy { device, count in (vector[device] ?? 0) >= count }
        }
    }

    /// One device's folder and what its Syncthing knows of it.
    final class Device {
        let index: Int
        /// The short device ID in conflict names.
        let id: String
        let folder: URL
        /// The version of each file as this device last scanned or pulled it.
        var known: [String: Version] = [:]
        /// When the next scan runs (nil: no local change waiting).
        var scanDue: Double?
        /// Until when the device is offline.
        var offlineUntil: Double = 0
        /// When a program last wrote in the folder, and whether that was a person's edit.
        var lastWrite: (time: Double, byUser: Bool)?

        init(index: Int, folder: URL) {
            self.index = index
            self.id = String(repeating: Character(UnicodeScalar(UInt8(65 + index))), count: 7)
            self.folder = folder
        }

        func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

        /// The files of the folder (temporary files aside).
        func names() -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter { !$0.hasPrefix(".syncthing.") }.sorted()
        }

        func bytes(_ name: String) -> Data? { FileManager.default.contents(atPath: path(name)) }
    }

    /// A version on its way to a device.
    private struct Delivery {
        let at: Double
        let device: Int
        let name: String
        let version: Version
    }

    /// What happened, for a failure's message and the figures.
    struct Conflict {
        let time: Double
        let device: Int
        let name: String
        let copy: String
        /// Whether either version was a person's edit (else two watchers' merges met).
        let real: Bool
    }

    let devices: [Device]
    let scanDelay: Double
    let latency: Double
    private(set) var now: Double = 0
    private var deliveries: [Delivery] = []
    private(set) var conflicts: [Conflict] = []
    /// Copy names that were overwritten by a same-named copy from another device.
    private(set) var copiesOverwritten: [String] = []
    /// Called after the model changed a device's folder (a pull, a rename, a deletion).
    var onFolderChange: (Int) -> Void = { _ in }
    /// The wall-clock date of the model's time 0 (conflict names carry a date).
    private let epoch: Double = 1_796_160_000

    init(folders: [URL], scanDelay: Double, latency: Double = 0.2) {
        devices = folders.enumerated().map { Device(index: $0.offset, folder: $0.element) }
        self.scanDelay = scanDelay
        self.latency = latency
    }

    /// Every device has the files it has now as its known versions (a folder set up in step).
    func startInStep() {
        for device in devices {
            for name in device.names() {
                device.known[name] = Version(bytes: device.bytes(name), modifiedBy: 0, modified: 0, vector: [0: 1])
            }
        }
    }

    /// A device's folder changed locally (a program wrote it; `byUser`: a person's edit): a scan is
    /// due after the delay.
    func noticeLocalChange(on index: Int, byUser: Bool = false) {
        let device = devices[index]
        device.lastWrite = (now, byUser || (device.lastWrite.map { $0.byUser && device.scanDue != nil } ?? false))
        if device.scanDue == nil { device.scanDue = now + scanDelay }
    }

    /// Takes `index` offline until `until`.
    func takeOffline(_ index: Int, until: Double) { devices[index].offlineUntil = until }

    /// When the model next acts (nil: nothing pending).
    var nextEvent: Double? {
        let scans = devices.compactMap(\.scanDue)
        let pulls = deliveries.map { max($0.at, devices[$0.device].offlineUntil) }
        return (scans + pulls).min()
    }

    /// Whether nothing is waiting to be scanned or pulled.
    var isIdle: Bool { nextEvent == nil }

    /// Runs everything due up to `time`, in order, and sets the clock to `time`.
    func advance(to time: Double) {
        while let next = nextEvent, next <= time {
            now = max(now, next)
            if let device = devices.first(where: { $0.scanDue.map { $0 <= now } ?? false }) {
                scan(device)
                continue
            }
            guard let index = deliveries.firstIndex(where: { max($0.at, devices[$0.device].offlineUntil) <= now }) else { break }
            let delivery = deliveries.remove(at: index)
            pull(delivery)
        }
        now = max(now, time)
    }

    private func scan(_ device: Device) {
        device.scanDue = nil
        guard device.offlineUntil <= now else {
            device.scanDue = device.offlineUntil
            return
        }
        defer { device.lastWrite = nil }
        let present = Set(device.names())
        for name in present.union(device.known.keys).sorted() {
            let bytes = device.bytes(name)
            let known = device.known[name]
            guard bytes.map({ SHA256.hexHash($0) }) != known?.sha256 else { continue }
            if bytes == nil && known?.bytes == nil { continue }
            var vector = known?.vector ?? [:]
            vector[device.index, default: 0] += 1
            var version = Version(bytes: bytes, modifiedBy: device.index, modified: device.lastWrite?.time ?? now, vector: vector)
            version.byUser = device.lastWrite?.byUser ?? false
            device.known[name] = version
            announce(version, of: name, from: device.index)
        }
    }

    private func announce(_ version: Version, of name: String, from index: Int) {
        for other in devices where other.index != index {
            deliveries.removeAll { $0.device == other.index && $0.name == name && version.dominates($0.version) }
            deliveries.append(Delivery(at: now + latency, device: other.index, name: name, version: version))
        }
    }

    private func pull(_ delivery: Delivery) {
        let device = devices[delivery.device]
        let name = delivery.name, incoming = delivery.version
        let local = device.known[name]
        let onDisk = device.bytes(name)
        // A local change not scanned yet: Syncthing will not overwrite it; the pull waits for the scan.
        if onDisk.map({ SHA256.hexHash($0) }) != local?.sha256 && !(onDisk == nil && local?.bytes == nil) {
            if device.scanDue == nil { device.scanDue = now }
            deliveries.append(Delivery(at: (device.scanDue ?? now) + 0.01, device: device.index, name: name, version: incoming))
            return
        }
        if let local {
            if local.dominates(incoming) { return }  // already has it (or newer)
            if incoming.bytes == nil && !incoming.dominates(local) {
                // Deleted elsewhere, changed here: the change wins and goes back to the others.
                var vector = local.vector.merging(incoming.vector) { max($0, $1) }
                vector[device.index, default: 0] += 1
                let kept = Version(bytes: local.bytes, modifiedBy: device.index, modified: local.modified, vector: vector)
                device.known[name] = kept
                announce(kept, of: name, from: device.index)
                return
            }
            if !incoming.dominates(local) && local.bytes != nil && incoming.bytes != nil && local.sha256 != incoming.sha256 {
                resolveConflict(on: device, name: name, local: local, incoming: incoming)
                return
            }
        }
        apply(incoming, to: device, name: name)
    }

    /// Both changed the file: the older modification loses (on every device alike); the device
    /// whose own version lost renames it aside, named by the winner's device; no copy is made of a copy.
    private func resolveConflict(on device: Device, name: String, local: Version, incoming: Version) {
        let merged = local.vector.merging(incoming.vector) { max($0, $1) }
        let incomingWins = incoming.modified > local.modified || (incoming.modified == local.modified && incoming.modifiedBy < local.modifiedBy)
        if ConflictCopies.isConflictCopyName(name) && incomingWins {
            // "Already a conflict copy; not copying again": the losing copy is simply replaced.
            copiesOverwritten.append(name)
            apply(Version(bytes: incoming.bytes, modifiedBy: incoming.modifiedBy, modified: incoming.modified, vector: merged), to: device, name: name)
            return
        }
        guard incomingWins else {
            // This device's version wins: it is the global version already and stays as it is; the
            // losing device makes the copy when it pulls this one (nothing is announced from here,
            // so the losing version is never overwritten without a copy).
            return
        }
        let copy = conflictName(of: name, modifiedBy: incoming.modifiedBy)
        if FileManager.default.fileExists(atPath: device.path(copy)) { copiesOverwritten.append(copy) }
        conflicts.append(Conflict(time: now, device: device.index, name: name, copy: copy, real: local.byUser || incoming.byUser))
        // The local version is renamed aside (its inode goes with it), the incoming one put in place.
        _ = rename(device.path(name), device.path(copy))
        apply(Version(bytes: incoming.bytes, modifiedBy: incoming.modifiedBy, modified: incoming.modified, vector: merged), to: device, name: name)
        noticeLocalChange(on: device.index)  // the new copy is a local file to scan and announce
    }

    private func apply(_ version: Version, to device: Device, name: String) {
        if let bytes = version.bytes {
            write(bytes, to: device, name: name)
        } else {
            _ = unlink(device.path(name))
        }
        device.known[name] = version
        onFolderChange(device.index)
    }

    /// Written as Syncthing does: a temporary file renamed in.
    private func write(_ bytes: Data, to device: Device, name: String) {
        let temporary = device.path(".syncthing.\(name).tmp")
        FileManager.default.createFile(atPath: temporary, contents: bytes)
        _ = rename(temporary, device.path(name))
    }

    private func conflictName(of name: String, modifiedBy index: Int) -> String {
        let date = Date(timeIntervalSince1970: epoch + now.rounded(.down))
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        let stem = (name as NSString).deletingPathExtension, ext = (name as NSString).pathExtension
        return "\(stem).sync-conflict-\(formatter.string(from: date))-\(devices[index].id).\(ext)"
    }
}

extension ConflictCopies {
    /// Whether `name` is a Syncthing conflict copy's name (of any file).
    static func isConflictCopyName(_ name: String) -> Bool { name.contains(".sync-conflict-") }
}

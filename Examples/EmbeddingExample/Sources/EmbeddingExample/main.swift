// What an app does with the engine: open a vault, watch it, and see another device's edit merged in.
// Usage: EmbeddingExample <vault.kdbx>   (the password on the first line of standard input)
import Foundation
import MyPassCore
import MyPassSync

guard CommandLine.arguments.count == 2, let password = readLine(strippingNewline: true) else {
    FileHandle.standardError.write(Data("usage: EmbeddingExample <vault.kdbx>, password on standard input\n".utf8))
    exit(2)
}
let vaultPath = CommandLine.arguments[1]
let folder = (vaultPath as NSString).deletingLastPathComponent
let state = SyncStateStore(directory: NSTemporaryDirectory() + "/example-state-\(getpid())")
// This device's settings (backups, KDF salt rotation, conflict-copy naming): an app keeps its own,
// the CLI reads them with `DeviceSettings.load()`. Every job is given them; none defaults them.
let device = DeviceSettings()

// 1. Open the vault: the header and KDF are checked before the credentials are used.
let file = try VaultFile.read(vaultPath)
let credentials = try VaultCredentials(password: password)
let vault = try file.unlock(credentials)
print("opened \(vaultPath): \(vault.format.oneLine), \(vault.vault.root.allEntries().count) entries")

// 2. Subscribe to the engine's events as an AsyncStream, and start it on its own thread.
let (events, continuation) = AsyncStream.makeStream(of: WatchEvent.self)
var settings = WatchEngine.Settings(device: device)
settings.debounce = 0.1
let engine = WatchEngine(vaults: [vaultPath], credentials: credentials, limits: file.limits, state: state, settings: settings) {
    continuation.yield($0)
}
Thread { engine.run(); continuation.finish() }.start()

// 3. Another device edits its copy of the vault; the sync engine leaves that copy beside ours as a
//    Syncthing conflict copy.
let otherDevice = NSTemporaryDirectory() + "/example-other-\(getpid())"
try FileManager.default.createDirectory(atPath: otherDevice, withIntermediateDirectories: true)
let theirPath = otherDevice + "/vault.kdbx"
try FileManager.default.copyItem(atPath: vaultPath, toPath: theirPath)
let theirs = try VaultFile.read(theirPath).unlock(credentials).session(state: SyncStateStore(directory: otherDevice + "/state"), settings: device)
theirs.update(try theirs.vault.addingEntry(title: "Added on the phone", userName: "phone", to: theirs.vault.root.uuid).vault)
try theirs.saveMerging()
let name = ((vaultPath as NSString).lastPathComponent as NSString).deletingPathExtension
let copyPath = folder + "/\(name).sync-conflict-20261130-120000-PHONE.kdbx"

// 4. Print what the engine reports until the copy is merged, then stop it.
var merged = false
for await event in events {
    print("event: \(event.kind.rawValue)" + (event.detail.isEmpty ? "" : " — \(event.detail)"))
    if event.kind == .baseRecorded || event.kind == .ownWriteIgnored, !merged, !FileManager.default.fileExists(atPath: copyPath) {
        try FileManager.default.moveItem(atPath: theirPath, toPath: copyPath)
    }
    if case .conflictCopyMerged(_, _, _, let changes, _) = event {
        merged = true
        for change in changes { print("  \(change)") }
        engine.stop()
    }
}
try? FileManager.default.removeItem(atPath: otherDevice)

// 5. The vault on disk now holds the other device's entry.
let after = try VaultFile.read(vaultPath).unlock(credentials).vault
let titles = after.root.allEntries().map(\.entry.title)
print(merged && titles.contains("Added on the phone") ? "merged: the vault now holds \"Added on the phone\"" : "not merged")
exit(merged ? 0 : 1)

import Foundation
import KDBXFormat
import MyPassCore

/// The vault of the format benchmark: `entries` entries in 20 groups, each with `historyItems`
/// history versions and 2 custom fields (one protected), plus about 1 MB of attachments.
func makeBenchmarkVault(entries: Int, historyItems: Int = 5) -> Vault {
    let start = Timestamp(iso8601: "2025-01-01T00:00:00Z")!
    var vault = Vault.empty(name: "benchmark", at: start)
    vault.meta.historyMaxItems = historyItems
    var attachments: [BinaryID] = []
    for index in 0..<16 {
        let bytes = Data((0..<(64 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* (index + 7)) })
        attachments.append(vault.binaries.add(bytes, isProtected: index % 2 == 0))
    }
    var groups = (0..<20).map { index in
        Group(uuid: UUID(), name: "Group \(index)", times: Times(allAt: start))
    }
    for index in 0..<entries {
        let created = Timestamp(secondsSinceYearOne: start.secondsSinceYearOne + Int64(index))
        var entry = Entry(uuid: UUID(), tags: ["bench", "tag\(index % 7)"], times: Times(allAt: created))
        entry.fields = [
            EntryField(key: EntryField.title, value: .plain("Entry \(index) — some service name")),
            EntryField(key: EntryField.userName, value: .plain("user\(index)@example.org")),
            EntryField(key: EntryField.password, value: FieldValue("pw-\(index)-\(UUID().uuidString.prefix(12))", isProtected: true)),
            EntryField(key: EntryField.url, value: .plain("https://service\(index % 500).example.com/login")),
            EntryField(key: EntryField.notes, value: .plain("Notes for entry \(index).\nSecond line with some more text to be realistic.")),
            EntryField(key: "Recovery code", value: FieldValue("RC-\(index)-ABCDEF-123456", isProtected: true)),
            EntryField(key: "Account number", value: .plain("ACC-\(1_000_000 + index)")),
        ]
        if index % 625 == 0 { entry.attachments = [Attachment(name: "file\(index).bin", binary: attachments[index / 625 % 16])] }
        var history: [Entry] = []
        for version in 0..<historyItems {
            var old = entry
            old.setField(EntryField.password, FieldValue("old-\(version)-\(index)", isProtected: true))
            old.times.lastModified = Timestamp(secondsSinceYearOne: created.secondsSinceYearOne + Int64(version))
            history.append(old)
        }
        entry.history = history
        groups[index % 20].entries.append(entry)
    }
    vault.root.groups = groups
    return vault
}

/// Writes `bench-N.kdbx` (password "bench", cheap AES-KDF) into `directory`.
func writeBenchmarkVault(entries: Int, directory: URL) throws {
    let settings = FormatSettings(version: .v4_0, cipher: .aes256, kdf: .aesKDF(seed: Data(repeating: 1, count: 32), rounds: 1000))
    let file = try KDBXWriter.serialize(makeBenchmarkVault(entries: entries), settings: settings, key: CompositeKey(password: "bench")).file
    try file.write(to: directory.appendingPathComponent("bench-\(entries).kdbx"))
}

/// `mypass-bench vault [--entries N]`: generation, save and open of a large vault with a cheap KDF.
func runVaultBenchmark(entries: Int, directory: URL) throws {
    let key = try CompositeKey(password: "bench")
    let settings = FormatSettings(version: .v4_0, cipher: .aes256, kdf: .aesKDF(seed: Data(repeating: 1, count: 32), rounds: 1000))
    let vault = makeBenchmarkVault(entries: entries)
    let (first, derived) = try KDBXWriter.serialize(vault, settings: settings, key: key)
    let path = directory.appendingPathComponent("bench-\(entries).kdbx")
    try first.write(to: path)
    let xmlSize = try KDBXWriter.plainXML(vault).count
    print("vault: \(entries) entries x \(5) history items, \(String(format: "%.1f", Double(xmlSize) / 1e6)) MB of XML, file \(String(format: "%.1f", Double(first.count) / 1e6)) MB")
    let save = try medianSeconds(repetitions: 3) {
        _ = try KDBXWriter.serialize(vault, settings: settings, key: key, cachedKey: derived)
    }
    report("save (serialize, cheap KDF)", save)
    let xml = try medianSeconds(repetitions: 3) { _ = try KDBXWriter.plainXML(vault) }
    report("export as plain XML (indented, ISO times)", xml)
    print("written to \(path.path); run `mypass-bench open \(path.path)` for open time and peak memory")
}

/// `mypass-bench open FILE`: open time and this process's peak memory (nothing else loaded).
/// Prints `seconds bytes`: the median time of the save's deflate (`PayloadCompressor`, the compressor a
/// save runs) over the payload in `path`, and the size it deflates to.
func runDeflateBenchmark(path: String, repetitions: Int) throws {
    let payload = try Data(contentsOf: URL(fileURLWithPath: path))
    var size = 0
    let seconds = try medianSeconds(repetitions: max(repetitions, 1)) { size = try deflatedSize(of: payload) }
    print(seconds, size)
}

func runOpenBenchmark(path: String) throws {
    let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
    let key = try CompositeKey(password: "bench")
    let before = peakResidentMegabytes()
    var samples: [Double] = []
    var entryCount = 0
    for _ in 0..<3 {
        // Each vault is released before the next run starts, outside the timed part.
        let (opened, seconds) = try timed { try KDBXReader.open(bytes, key: key) }
        samples.append(seconds)
        entryCount = opened.vault.root.allEntries().count
    }
    let median = samples.sorted()[samples.count / 2]
    report("open (decrypt + decompress + parse)", median, String(format: "peak RSS %.0f MB (%.0f MB before opening)", peakResidentMegabytes(), before))
    print("entries: \(entryCount)")
    // The same vault saved again (same settings, key already derived): the writer alone.
    let opened = try KDBXReader.open(bytes, key: key)
    let save = try medianSeconds(repetitions: 5) {
        _ = try KDBXWriter.serialize(opened.vault, settings: opened.settings, key: key, cachedKey: opened.derivedKey)
    }
    report("save (serialize with the same settings)", save)
}

import Foundation
import KDBXFormat
import MyPassCore
import MyPassMerge
import MyPassSync

/// `mypass-bench merge [N]`: two copies of an N-entry vault with 100 different edits each, merged and
/// written; open, merge and save timed (cheap KDF), peak memory of this process reported.
func runMergeBenchmark(entries: Int, directory: URL) throws {
    let (paths, key, derived) = try writeMergeWorkload(entries: entries, directory: directory)
    let files = try ["base", "local", "remote"].map { try Data(contentsOf: paths[$0]!) }
    try timeMerges(files: files, entries: entries, key: key, derived: derived)
}

/// Writes `merge-{base,local,remote}-N.kdbx` (password "bench", cheap KDF) into `directory`: a base
/// vault and two copies with 100 different edits each (user names on one, passwords on the other).
func writeMergeWorkload(entries: Int, directory: URL) throws -> (paths: [String: URL], key: CompositeKey, derived: DerivedKey?) {
    let key = try CompositeKey(password: "bench")
    let settings = FormatSettings(version: .v4_0, cipher: .aes256, kdf: .aesKDF(seed: Data(repeating: 1, count: 32), rounds: 1000))
    let base = makeBenchmarkVault(entries: entries)
    let all = base.root.allEntries().map(\.entry.uuid)
    let editTime = Timestamp(iso8601: "2026-06-01T00:00:00Z")!
    func edited(_ offset: Int, field: String) throws -> Vault {
        var vault = base
        for index in 0..<100 {
            let id = all[(index * 97 + offset) % all.count]
            vault = try vault.updatingEntry(id, at: Timestamp(secondsSinceYearOne: editTime.secondsSinceYearOne + Int64(index + offset))) {
                $0.setField(field, FieldValue("edited-\(index)-\(offset)", isProtected: field == EntryField.password))
            }
        }
        return vault
    }
    var paths: [String: URL] = [:]
    var derived: DerivedKey?
    for (name, vault) in [("base", base), ("local", try edited(0, field: EntryField.userName)), ("remote", try edited(50, field: EntryField.password))] {
        let (file, key) = try KDBXWriter.serialize(vault, settings: settings, key: key, cachedKey: derived)
        derived = key
        let path = directory.appendingPathComponent("merge-\(name)-\(entries).kdbx")
        try file.write(to: path)
        paths[name] = path
    }
    return (paths, key, derived)
}

private func timeMerges(files: [Data], entries: Int, key: CompositeKey, derived: DerivedKey?) throws {
    let before = peakResidentMegabytes()
    for useBase in [true, false] {
        var samples: [(open: Double, merge: Double, save: Double)] = []
        for _ in 0..<3 {
            let (opened, openTime) = try timed {
                try KDBXReader.open(files: useBase ? files : Array(files.dropFirst()), key: key, cachedKey: derived).map { try $0.get() }
            }
            let local = opened[useBase ? 1 : 0], remote = opened[useBase ? 2 : 1]
            let (result, mergeTime) = try timed {
                try VaultMerger.merge(base: useBase ? opened[0].vault : nil, local: local.vault, remote: remote.vault) { DeferredRelease.drop($0) }
            }
            let (_, saveTime) = try timed {
                try KDBXWriter.serialize(result.vault, settings: local.settings, key: key, cachedKey: local.derivedKey)
            }
            samples.append((openTime, mergeTime, saveTime))
        }
        let median = samples.sorted { $0.open + $0.merge + $0.save < $1.open + $1.merge + $1.save }[1]
        let label = useBase ? "with base (3 files opened)" : "without base (2 files opened)"
        report("merge \(entries) entries, \(label)", median.open + median.merge + median.save,
               String(format: "open %.2f s, merge %.2f s, save %.2f s", median.open, median.merge, median.save))
    }
    print(String(format: "peak RSS %.0f MB (%.0f MB before opening)", peakResidentMegabytes(), before))
}

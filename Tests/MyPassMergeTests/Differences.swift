import Foundation
import MyPassCore

/// A short account of how two vaults differ, for test failure messages (no secret values).
enum Differences {
    static func describe(_ a: Vault, _ b: Vault) -> String {
        var notes: [String] = []
        if a.meta != b.meta { notes.append("meta") }
        if a.deletedObjects != b.deletedObjects { notes.append("tombstones \(a.deletedObjects.count) vs \(b.deletedObjects.count)") }
        if a.binaries != b.binaries { notes.append("binaries") }
        let entriesA = Dictionary(a.root.allEntries().map { ($0.entry.uuid, $0) }, uniquingKeysWith: { first, _ in first })
        let entriesB = Dictionary(b.root.allEntries().map { ($0.entry.uuid, $0) }, uniquingKeysWith: { first, _ in first })
        for (uuid, left) in entriesA {
            guard let right = entriesB[uuid] else { notes.append("entry \(left.entry.title) only in first"); continue }
            if left.groupPath != right.groupPath { notes.append("\(left.entry.title): group \(left.groupPath) vs \(right.groupPath)") }
            if left.entry.withoutHistory != right.entry.withoutHistory {
                let fields = Set(left.entry.fields.map(\.key) + right.entry.fields.map(\.key))
                    .filter { left.entry.field($0) != right.entry.field($0) }.sorted()
                notes.append("\(left.entry.title): content differs [\(fields.joined(separator: ","))] times \(left.entry.times.lastModified) vs \(right.entry.times.lastModified)")
            }
            if left.entry.history != right.entry.history {
                notes.append("\(left.entry.title): history \(left.entry.history.count) vs \(right.entry.history.count)")
            }
        }
        for (uuid, right) in entriesB where entriesA[uuid] == nil { notes.append("entry \(right.entry.title) only in second") }
        if notes.isEmpty && a.root != b.root { notes.append("group tree or order differs") }
        return notes.isEmpty ? "equal" : notes.joined(separator: "; ")
    }
}

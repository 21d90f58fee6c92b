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
                var what = fields
                if left.entry.times != right.entry.times { what.append("times(\(left.entry.times.locationChanged) vs \(right.entry.times.locationChanged))") }
                if left.entry.tags != right.entry.tags { what.append("tags") }
                if left.entry.previousParentGroup != right.entry.previousParentGroup { what.append("previousParentGroup") }
                if left.entry.attachments != right.entry.attachments { what.append("attachments") }
                if left.entry.fields.map(\.key) != right.entry.fields.map(\.key) { what.append("field order") }
                notes.append("\(left.entry.title): content differs [\(what.joined(separator: ","))] times \(left.entry.times.lastModified) vs \(right.entry.times.lastModified)")
            }
            if left.entry.history != right.entry.history {
                notes.append("\(left.entry.title): history \(left.entry.history.count) vs \(right.entry.history.count)")
            }
        }
        for (uuid, right) in entriesB where entriesA[uuid] == nil { notes.append("entry \(right.entry.title) only in second") }
        if notes.isEmpty && a.root != b.root {
            var groupsA: [UUID: (Group, [String])] = [:], groupsB: [UUID: (Group, [String])] = [:]
            a.root.forEachGroup { groupsA[$0.uuid] = ($0, $1) }
            b.root.forEachGroup { groupsB[$0.uuid] = ($0, $1) }
            for (uuid, (left, path)) in groupsA {
                guard let (right, otherPath) = groupsB[uuid] else { notes.append("group \(left.name) only in first"); continue }
                if path != otherPath { notes.append("group \(left.name) at \(path) vs \(otherPath)") }
                if left.times != right.times { notes.append("group \(left.name) times \(left.times.lastModified)/\(left.times.locationChanged) vs \(right.times.lastModified)/\(right.times.locationChanged)") }
                if left.name != right.name { notes.append("group name \(left.name) vs \(right.name)") }
                if left.entries.map(\.uuid) != right.entries.map(\.uuid) { notes.append("group \(left.name) entry order") }
                if left.groups.map(\.uuid) != right.groups.map(\.uuid) { notes.append("group \(left.name) subgroup order") }
                if left.previousParentGroup != right.previousParentGroup { notes.append("group \(left.name) previousParentGroup") }
            }
            if notes.isEmpty { notes.append("group tree differs") }
        }
        return notes.isEmpty ? "equal" : notes.joined(separator: "; ")
    }
}

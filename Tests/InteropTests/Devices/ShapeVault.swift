import Foundation
import MyPassCore
import MyPassMerge
import Testing

/// The base vault of the merge-shape tests: groups Internet (GitHub, with custom data), Bank (Chase)
/// and Archive (Old), made with this library an hour before the clients edit it.
enum ShapeVault {
    static let internet = UUID(uuidString: "A1000000-0000-0000-0000-000000000001")!
    static let bank = UUID(uuidString: "A1000000-0000-0000-0000-000000000002")!
    static let archive = UUID(uuidString: "A1000000-0000-0000-0000-000000000003")!
    static let github = UUID(uuidString: "B1000000-0000-0000-0000-000000000001")!
    static let chase = UUID(uuidString: "B1000000-0000-0000-0000-000000000002")!
    static let old = UUID(uuidString: "B1000000-0000-0000-0000-000000000003")!

    /// When the base was made (an hour ago: the clients' edits come after it).
    static let made = Timestamp.now().adding(-3600)
    /// When the pykeepass devices start editing (keepassxc-cli edits, at the wall clock, come later).
    static let clientsStart = Timestamp.now().adding(-1800)

    static func make(historyMaxItems: Int = 10) throws -> Vault {
        var vault = Vault.empty(name: "shapes", at: made)
        vault.root.uuid = UUID(uuidString: "A1000000-0000-0000-0000-0000000000FF")!
        vault.meta.historyMaxItems = historyMaxItems
        for (name, id) in [("Internet", internet), ("Bank", bank), ("Archive", archive)] {
            vault = try vault.addingGroup(named: name, to: vault.root.uuid, at: made, uuid: id).vault
        }
        vault = try vault.addingEntry(title: "GitHub", userName: "alice", password: "gh-0", url: "https://github.com", to: internet, at: made, uuid: github).vault
        vault = try vault.addingEntry(title: "Chase", userName: "alice99", password: "bank-0", url: "", to: bank, at: made, uuid: chase).vault
        vault = try vault.addingEntry(title: "Old", userName: "old", password: "old-0", url: "", to: archive, at: made, uuid: old).vault
        if let index = vault.root.groups.firstIndex(where: { $0.uuid == internet }) {
            vault.root.groups[index].customData = [CustomDataItem(key: "gC", value: "0")]
        }
        return vault
    }
}

/// Merges two devices' files in both directions, with the base (certain, as `--base` hands it over)
/// and without, and checks each result and that merging it again with either input changes nothing.
struct EveryWay {
    let devices: ClientDevices
    var first = "laptop", second = "phone"

    func check(withBase: Bool = true, withoutBase: Bool = true, _ body: (MergeResult, String) throws -> Void) throws {
        let base = try devices.open("base"), one = try devices.open(first), two = try devices.open(second)
        let bases: [Vault?] = (withBase ? [base] : []) + (withoutBase ? [nil] : [])
        for ancestor in bases {
            for (name, local, remote) in [("\(first) <- \(second)", one, two), ("\(second) <- \(first)", two, one)] {
                let label = "\(name), \(ancestor == nil ? "no base" : "certain base")"
                let result = try VaultMerger.merge(base: ancestor, baseIsCertain: true, local: local, remote: remote)
                try body(result, label)
                for input in [local, remote] {
                    let again = try VaultMerger.merge(base: ancestor, baseIsCertain: true, local: result.vault, remote: input)
                    #expect(again.changes.isEmpty, "\(label): merging the result again reports \(again.changes.map { "\($0.kind) \($0.title)" })")
                    #expect(historyCount(again.vault) == historyCount(result.vault), "\(label): merging the result again grew history")
                }
            }
        }
    }

    private func historyCount(_ vault: Vault) -> Int {
        vault.root.allEntries().reduce(0) { $0 + $1.entry.history.count }
    }
}

extension Vault {
    /// Entry `uuid` and whether it is in the recycle bin.
    func find(_ uuid: UUID) -> (entry: Entry, inRecycleBin: Bool)? {
        guard let (entry, parent) = root.entry(uuid) else { return nil }
        return (entry, isInRecycleBin(group: parent))
    }

    func findGroup(_ uuid: UUID) -> Group? { root.group(uuid) }

    func parent(ofGroup uuid: UUID) -> UUID? {
        root.pathToGroup(uuid).flatMap { $0.dropLast().last }
    }
}

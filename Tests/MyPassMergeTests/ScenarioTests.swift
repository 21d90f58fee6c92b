import Foundation
import MyPassCore
import MyPassMerge
import Testing

/// The merged vault's view of scenario objects.
private struct MergedView {
    let vault: Vault

    func path(ofGroup uuid: UUID) -> String? {
        guard let ids = vault.root.pathToGroup(uuid) else { return nil }
        let names = ids.dropFirst().compactMap { vault.root.group($0)?.name }
        return "/" + names.joined(separator: "/")
    }

    func groupPaths() -> Set<String> {
        var paths = Set<String>()
        vault.root.forEachGroup { _, path in paths.insert("/" + path.joined(separator: "/")) }
        return paths
    }

    func inRecycleBin(_ parent: UUID) -> Bool {
        vault.isInRecycleBin(group: parent)
    }
}

@Suite("Merge scenarios (scenarios/*.json)")
struct ScenarioTests {
    /// Base, local and remote vaults of a scenario.
    static func replicas(_ scenario: Scenario) throws -> (base: Vault, local: Vault, remote: Vault) {
        let base = try ScenarioPlayer.apply(scenario.base, to: ScenarioPlayer.emptyVault())
        let local = try ScenarioPlayer.apply(scenario.local, to: base)
        return (scenario.mergeBase == "local" ? local : base, local, try ScenarioPlayer.apply(scenario.remote, to: base))
    }

    @Test("the catalogue is present")
    func catalogue() throws {
        #expect(try Scenario.all().count >= 20)
    }

    @Test("each scenario merges to its expected content", arguments: try Scenario.all())
    func expectedContent(scenario: Scenario) throws {
        let (base, local, remote) = try Self.replicas(scenario)
        var result = try VaultMerger.merge(base: scenario.withoutBase == true ? nil : base, local: local, remote: remote)
        if let third = scenario.third {
            let thirdCopy = try ScenarioPlayer.apply(third, to: base)
            let first = result
            result = try VaultMerger.merge(base: scenario.withoutBase == true ? nil : base, local: first.vault, remote: thirdCopy)
            result.changes = first.changes + result.changes
        }
        let view = MergedView(vault: result.vault)
        let expect = scenario.expect
        for expected in expect.entries ?? [] {
            guard let (entry, parent) = result.vault.root.entry(ScenarioID.uuid(expected.id)) else {
                Issue.record("\(expected.id) is missing")
                continue
            }
            if let group = expected.group { #expect(view.path(ofGroup: parent) == group, "\(expected.id) group") }
            for (key, value) in expected.fields ?? [:] { #expect(entry.text(key) == value, "\(expected.id).\(key)") }
            for key in expected.absentFields ?? [] { #expect(entry.field(key) == nil, "\(expected.id).\(key) should be gone") }
            if let tags = expected.tags { #expect(Set(entry.tags) == Set(tags), "\(expected.id) tags") }
            if let attachments = expected.attachments { #expect(entry.attachments.map(\.name).sorted() == attachments.sorted(), "\(expected.id) attachments") }
            if let minimum = expected.historyAtLeast { #expect(entry.history.count >= minimum, "\(expected.id) history \(entry.history.count)") }
            if let exactly = expected.historyExactly { #expect(entry.history.count == exactly, "\(expected.id) history \(entry.history.count)") }
            for (key, value) in expected.historyContains ?? [:] {
                #expect(entry.history.contains { $0.text(key) == value }, "\(expected.id) history keeps \(key)")
            }
            if let inBin = expected.inRecycleBin { #expect(view.inRecycleBin(parent) == inBin, "\(expected.id) recycle bin") }
        }
        for id in expect.absent ?? [] {
            #expect(result.vault.root.entry(ScenarioID.uuid(id)) == nil, "\(id) should be deleted")
        }
        let groups = view.groupPaths()
        for path in expect.groups ?? [] { #expect(groups.contains(path), "group \(path)") }
        for path in expect.absentGroups ?? [] { #expect(!groups.contains(path), "group \(path) should be gone") }
        if let bins = expect.recycleBins {
            #expect(result.vault.root.groups.filter { $0.name == "Recycle Bin" }.count == bins)
        }
        if let name = expect.name { #expect(result.vault.meta.databaseName == name) }
        if let icons = expect.customIcons {
            #expect(Set(result.vault.meta.customIcons.map(\.uuid)) == Set(icons.map(ScenarioID.uuid)), "custom icons")
        }
        let kinds = Set(result.changes.map(\.kind.rawValue))
        for kind in expect.changes ?? [] { #expect(kinds.contains(kind), "change log lacks \(kind): \(result.changes)") }
        if expect.noChanges == true { #expect(result.changes.isEmpty, "\(result.changes)") }
        for id in expect.tombstones ?? [] {
            #expect(result.vault.deletedObjects.contains { $0.uuid == ScenarioID.uuid(id) }, "tombstone for \(id)")
        }
        // A tombstone never names a live object.
        for deleted in result.vault.deletedObjects {
            #expect(result.vault.root.entry(deleted.uuid) == nil && result.vault.root.group(deleted.uuid) == nil)
        }
    }

    @Test("each scenario is symmetric, idempotent and deterministic", arguments: try Scenario.all())
    func properties(scenario: Scenario) throws {
        let (base, local, remote) = try Self.replicas(scenario)
        let ancestor = scenario.withoutBase == true ? nil : base
        let forward = try VaultMerger.merge(base: ancestor, local: local, remote: remote)
        let backward = try VaultMerger.merge(base: ancestor, local: remote, remote: local)
        let symmetric = forward.vault.root == backward.vault.root && forward.vault.deletedObjects == backward.vault.deletedObjects
            && forward.vault.binaries == backward.vault.binaries && forward.vault.meta == backward.vault.meta
        #expect(symmetric, "merge(L, R) and merge(R, L) differ: \(Differences.describe(forward.vault, backward.vault))")
        let again = try VaultMerger.merge(base: ancestor, local: local, remote: remote)
        let deterministic = again.vault == forward.vault && again.changes == forward.changes
        #expect(deterministic, "not deterministic")
        for (name, input) in [("local", local), ("remote", remote)] {
            let repeated = try VaultMerger.merge(base: ancestor, local: forward.vault, remote: input)
            let unchanged = repeated.vault == forward.vault
            #expect(unchanged, "merging the \(name) input again changed: \(Differences.describe(forward.vault, repeated.vault))")
            #expect(repeated.changes.isEmpty, "merging the \(name) input again logged \(repeated.changes)")
        }
        for same in [base, local, remote] {
            let identity = try VaultMerger.merge(base: same, local: same, remote: same)
            let isIdentity = identity.vault == same && identity.changes.isEmpty
            #expect(isIdentity, "merge(X, X, X) != X")
        }
    }
}

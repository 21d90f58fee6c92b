import Foundation
import MyPassCore
import MyPassCrypto
import Testing

/// A merge scenario from `scenarios/*.json`: a base built by operations, the operations device A
/// (local) and device B (remote) made since, and what the merge must produce.
struct Scenario: Decodable, Sendable {
    struct Operation: Decodable, Sendable {
        /// addGroup, addEntry, edit, move, recycle, delete, renameGroup, moveGroup, recycleGroup,
        /// deleteGroup, setName, cleanHistory, attach, detach, renameAttachment, addIcon.
        let op: String
        let time: String
        let id: String?
        let title: String?
        let group: String?
        let to: String?
        let name: String?
        let fields: [String: String]?
        let protected: [String]?
        let remove: [String]?
        let tags: [String]?
        let content: String?
    }

    struct ExpectedEntry: Decodable, Sendable {
        let id: String
        let group: String?
        let fields: [String: String]?
        let absentFields: [String]?
        let tags: [String]?
        let attachments: [String]?
        let historyAtLeast: Int?
        let historyExactly: Int?
        let historyContains: [String: String]?
        let inRecycleBin: Bool?
    }

    struct Expectation: Decodable, Sendable {
        let entries: [ExpectedEntry]?
        let absent: [String]?
        let groups: [String]?
        let absentGroups: [String]?
        let recycleBins: Int?
        let name: String?
        let changes: [String]?
        let noChanges: Bool?
        let tombstones: [String]?
        let customIcons: [String]?
    }

    let name: String
    let description: String
    let keepassxcLosesData: Bool?
    let withoutBase: Bool?
    /// `"local"`: the merge is given device A's current version as its base, as a watcher is after it
    /// took in its own file (the base then is not an ancestor of what device B changed).
    let mergeBase: String?
    let base: [Operation]
    let local: [Operation]
    let remote: [Operation]
    /// A third device (a second conflict copy), merged after the remote.
    let third: [Operation]?
    let expect: Expectation

    var file = ""

    private enum CodingKeys: String, CodingKey {
        case name, description, keepassxcLosesData, withoutBase, mergeBase, base, local, remote, third, expect
    }

    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("scenarios")

    /// Every scenario file, sorted.
    static func all() throws -> [Scenario] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".json") }.sorted().map { file in
            var scenario = try JSONDecoder().decode(Scenario.self, from: Data(contentsOf: directory.appendingPathComponent(file)))
            scenario.file = file
            return scenario
        }
    }
}

extension Scenario: CustomTestStringConvertible {
    var testDescription: String { "\(file): \(name)" }
}

/// Deterministic UUIDs for scenario identifiers.
enum ScenarioID {
    static func uuid(_ id: String) -> UUID {
        let digest = [UInt8](SHA256.hash(Data(id.utf8)))
        return UUID(uuid: (digest[0], digest[1], digest[2], digest[3], digest[4], digest[5], digest[6], digest[7],
                           digest[8], digest[9], digest[10], digest[11], digest[12], digest[13], digest[14], digest[15]))
    }

    static let rootUUID = uuid("root")
}

enum ScenarioError: Error, CustomStringConvertible {
    case badTime(String)
    case unknownGroup(String)
    case unknownOperation(String)
    case missingField(String, String)

    var description: String {
        switch self {
        case .badTime(let text): "bad time \(text)"
        case .unknownGroup(let path): "no group \(path)"
        case .unknownOperation(let op): "unknown operation \(op)"
        case .missingField(let op, let field): "\(op) needs \(field)"
        }
    }
}

/// Applies scenario operations with the vault's own edit functions (so KeePass's bookkeeping applies).
enum ScenarioPlayer {
    static func emptyVault() -> Vault {
        let start = Timestamp(iso8601: "2026-01-01T00:00:00Z")!
        var vault = Vault.empty(name: "scenario", at: start)
        vault.root.uuid = ScenarioID.rootUUID
        return vault
    }

    /// The UUID of the group at `path` ("/" is the root; "/A/B" by names).
    static func group(_ path: String, in vault: Vault) throws -> UUID {
        var current = vault.root
        for name in path.split(separator: "/").map(String.init) {
            guard let child = current.groups.first(where: { $0.name == name }) else { throw ScenarioError.unknownGroup(path) }
            current = child
        }
        return current.uuid
    }

    static func apply(_ operations: [Scenario.Operation], to start: Vault) throws -> Vault {
        var vault = start
        for operation in operations {
            guard let time = Timestamp(iso8601: operation.time) else { throw ScenarioError.badTime(operation.time) }
            func required(_ value: String?, _ field: String) throws -> String {
                guard let value else { throw ScenarioError.missingField(operation.op, field) }
                return value
            }
            switch operation.op {
            case "addGroup":
                let parent = try group(operation.group ?? "/", in: vault)
                vault = try vault.addingGroup(named: try required(operation.name, "name"), to: parent, at: time,
                                              uuid: ScenarioID.uuid(try required(operation.id, "id"))).vault
            case "addEntry":
                let parent = try group(operation.group ?? "/", in: vault)
                let fields = operation.fields ?? [:]
                var added = try vault.addingEntry(
                    title: try required(operation.title, "title"), userName: fields["UserName"] ?? "",
                    password: fields["Password"] ?? "", url: fields["URL"] ?? "", notes: fields["Notes"] ?? "",
                    to: parent, at: time, uuid: ScenarioID.uuid(try required(operation.id, "id"))).vault
                let id = ScenarioID.uuid(try required(operation.id, "id"))
                let extra = fields.filter { !EntryField.isStandard($0.key) }
                // Custom fields and tags are part of the creation: no history, no new time.
                added = modify(id, in: added) { entry in
                    for (key, value) in extra.sorted(by: { $0.key < $1.key }) {
                        entry.setField(key, FieldValue(value, isProtected: operation.protected?.contains(key) ?? false))
                    }
                    entry.tags = operation.tags ?? []
                }
                vault = added
            case "edit":
                let id = ScenarioID.uuid(try required(operation.id, "id"))
                vault = try vault.updatingEntry(id, at: time) { entry in
                    for (key, value) in (operation.fields ?? [:]).sorted(by: { $0.key < $1.key }) {
                        let isProtected = operation.protected?.contains(key) ?? entry.field(key)?.isProtected ?? (key == "Password")
                        entry.setField(key, FieldValue(value, isProtected: isProtected))
                    }
                    for key in operation.remove ?? [] { entry.setField(key, nil) }
                    if let tags = operation.tags { entry.tags = tags }
                }
            case "attach", "detach":
                let id = ScenarioID.uuid(try required(operation.id, "id"))
                let name = try required(operation.name, "name")
                var binary: BinaryID?
                if operation.op == "attach" {
                    binary = vault.binaries.add(Data((operation.content ?? name).utf8), isProtected: false)
                }
                vault = try vault.updatingEntry(id, at: time) { entry in
                    entry.attachments.removeAll { $0.name == name }
                    if let binary { entry.attachments.append(Attachment(name: name, binary: binary)) }
                }
            case "move":
                vault = try vault.movingEntry(ScenarioID.uuid(try required(operation.id, "id")),
                                              to: try group(try required(operation.to, "to"), in: vault), at: time)
            case "recycle", "delete":
                vault = try vault.deletingEntry(ScenarioID.uuid(try required(operation.id, "id")),
                                                permanently: operation.op == "delete", at: time)
            case "renameGroup":
                vault = try vault.renamingGroup(try group(try required(operation.group, "group"), in: vault),
                                                to: try required(operation.name, "name"), at: time)
            case "moveGroup":
                vault = try vault.movingGroup(try group(try required(operation.group, "group"), in: vault),
                                              to: try group(try required(operation.to, "to"), in: vault), at: time)
            case "recycleGroup", "deleteGroup":
                vault = try vault.deletingGroup(try group(try required(operation.group, "group"), in: vault),
                                                permanently: operation.op == "deleteGroup", at: time)
            case "addIcon":
                vault.meta.customIcons.append(CustomIcon(uuid: ScenarioID.uuid(try required(operation.id, "id")),
                                                         data: Data((operation.content ?? "icon").utf8), lastModified: time))
            case "renameAttachment":
                let id = ScenarioID.uuid(try required(operation.id, "id"))
                let from = try required(operation.name, "name"), to = try required(operation.to, "to")
                vault = try vault.updatingEntry(id, at: time) { entry in
                    for index in entry.attachments.indices where entry.attachments[index].name == from {
                        entry.attachments[index].name = to
                    }
                }
            case "setName":
                vault.meta.databaseName = try required(operation.name, "name")
                vault.meta.databaseNameChanged = time
            case "cleanHistory":
                vault = modify(ScenarioID.uuid(try required(operation.id, "id")), in: vault) { $0.history = [] }
            default:
                throw ScenarioError.unknownOperation(operation.op)
            }
        }
        return vault
    }

    /// The vault with `change` applied to entry `id` without any bookkeeping (creation details, a
    /// user cleaning history).
    static func modify(_ id: UUID, in vault: Vault, _ change: (inout Entry) -> Void) -> Vault {
        var result = vault
        func visit(_ group: inout Group) {
            for index in group.entries.indices where group.entries[index].uuid == id { change(&group.entries[index]) }
            for index in group.groups.indices { visit(&group.groups[index]) }
        }
        visit(&result.root)
        return result
    }
}

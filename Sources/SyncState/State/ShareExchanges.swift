public import Foundation
public import SyncFiles

/// What this device keeps per shared group of a vault (KeeShare), beside the vault's own state: the
/// container version it last imported or exported (the base of the next three-way merge, still
/// encrypted with the container's password), when it last imported and exported, and the reference
/// a person approved on this device (a reference is a write target: one that arrives through a merge
/// does nothing until approved here).
public struct ShareExchanges: Sendable {
    /// The state directory.
    public let state: SyncStateStore
    /// The vault whose shares these are.
    public let vaultPath: String

    /// The record of one shared group.
    public struct Record: Codable, Sendable, Equatable {
        /// The digest of the reference approved on this device (`ShareApproval`), nil when none is.
        public var approvedReference: String?
        /// When the container was last merged into the group.
        public var lastImport: Date?
        /// When the group was last written to the container.
        public var lastExport: Date?

        /// An empty record.
        public init(approvedReference: String? = nil, lastImport: Date? = nil, lastExport: Date? = nil) {
            self.approvedReference = approvedReference
            self.lastImport = lastImport
            self.lastExport = lastExport
        }
    }

    /// One shared group as the last pass found it (names only: what `daemon status` shows without
    /// opening the vault).
    public struct Summary: Codable, Sendable, Equatable {
        public var group: UUID
        public var path: String
        public var type: String?
        public var container: String?
        public var approved: Bool
        public var problem: String?
        /// The approval digest of the reference the group carries (no password).
        public var reference: String?

        public init(group: UUID, path: String, type: String?, container: String?, approved: Bool, problem: String?, reference: String?) {
            self.group = group
            self.path = path
            self.type = type
            self.container = container
            self.approved = approved
            self.problem = problem
            self.reference = reference
        }
    }

    /// The shared groups as the last pass found them (none when none was kept).
    public func summaries() -> [Summary] {
        guard let json = try? FileReading.readAll(atPath: state.stem(for: vaultPath) + ".shares.json", on: state.fileSystem,
                                                  followSymlinks: false, limit: 1 << 20) else { return [] }
        return (try? JSONDecoder().decode([Summary].self, from: json)) ?? []
    }

    /// Keeps `summaries` when they changed.
    public func saveSummaries(_ summaries: [Summary]) throws(FileError) {
        guard summaries != self.summaries() else { return }
        let path = state.stem(for: vaultPath) + ".shares.json"
        let json: Data
        do { json = try JSONEncoder().encode(summaries) } catch { throw .system(operation: .encode, path: path, errno: EINVAL, message: "\(error)") }
        try write(json, to: path, durable: false)
    }

    /// The shares of the vault at `vaultPath`.
    public init(state: SyncStateStore, vaultPath: String) {
        self.state = state
        self.vaultPath = vaultPath
    }

    private func stem(_ group: UUID) -> String { state.stem(for: vaultPath) + ".share-" + group.uuidString.lowercased() }

    /// The record of `group` (empty when none is kept or it does not parse).
    public func record(for group: UUID) -> Record {
        guard let json = try? FileReading.readAll(atPath: stem(group) + ".json", on: state.fileSystem, followSymlinks: false, limit: 64 * 1024) else {
            return Record()
        }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return (try? decoder.decode(Record.self, from: json)) ?? Record()
    }

    /// Keeps `record` for `group` (atomic; not fsynced: derived bookkeeping, the approval aside, which is
    /// written durably).
    public func save(_ record: Record, for group: UUID) throws(FileError) {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys]
        let path = stem(group) + ".json"
        let json: Data
        do { json = try encoder.encode(record) } catch { throw .system(operation: .encode, path: path, errno: EINVAL, message: "\(error)") }
        try write(json, to: path, durable: record.approvedReference != self.record(for: group).approvedReference)
    }

    /// The container version last exchanged for `group`, nil when none is kept.
    public func exchanged(for group: UUID, limit: Int64) -> Data? {
        try? FileReading.readAll(atPath: stem(group) + ".kdbx", on: state.fileSystem, followSymlinks: false, limit: limit)
    }

    /// Keeps `bytes` as the container version last exchanged for `group`.
    public func recordExchanged(_ bytes: Data, for group: UUID) throws(FileError) {
        try write(bytes, to: stem(group) + ".kdbx", durable: false)
    }

    /// Forgets everything kept for `group` (its share was removed).
    public func forget(_ group: UUID) {
        for suffix in [".kdbx", ".json"] {
            guard let (directory, name) = try? DirectoryHandle.parent(of: stem(group) + suffix, on: state.fileSystem) else { continue }
            _ = SystemCalls.unlink(name, in: directory)
        }
    }

    private func write(_ data: Data, to path: String, durable: Bool) throws(FileError) {
        try state.prepare()
        do {
            _ = try DurableFile.replace(atPath: path, on: state.fileSystem, with: data, policy: .anything, durable: durable)
        } catch {
            if case .file(let fileError) = error { throw fileError }
            throw .system(operation: .write, path: path, errno: EIO, message: error.description)
        }
    }
}

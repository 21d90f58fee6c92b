public import Foundation
internal import SyncFiles
package import MyPassCore
internal import MyPassCrypto
#if canImport(Glibc)
internal import Glibc
#endif

/// Every merge that wrote a vault on this device, kept in the sync state (never in the synced folder):
/// a summary without values (`<id>.json`: time, kind, inputs, counts), the vault file before and
/// after (`<id>.before.kdbx`, `<id>.after.kdbx`: what an undo needs) and the explanation sealed in a
/// one-entry KDBX file (`<id>.explanation.kdbx`) — all encrypted with the vault's own key, as the
/// stored base is. Listing needs no password; the explanation and an undo need it.
/// One 0700 folder per vault, files 0600; the newest `maximumCount` records, none older than `maximumAge`.
public struct MergeJournal: Sendable {
    /// How many records are kept per vault.
    public static let maximumCount = 20
    /// How long a record is kept.
    public static let maximumAge: TimeInterval = 30 * 24 * 3600

    /// Which command merged.
    public enum Kind: String, Codable, Sendable {
        /// `merge`.
        case merge
        /// `conflicts --merge` or the watcher folding sync-conflict copies.
        case conflictCopies
        /// `resolve --merge`.
        case resolve
        /// `sync --remote`.
        case sync
        /// The watcher putting back synced content that a program's blind save dropped.
        case restore
        /// `undo`: a journaled merge taken back.
        case undo
    }

    /// One merged input: its name and the SHA-256 of its bytes (when they were at hand).
    public struct Input: Codable, Sendable, Equatable {
        public let name: String
        public let sha256: String?

        /// An input named `name` whose bytes were `bytes`.
        public init(name: String, bytes: Data?) {
            self.init(name: name, sha256: bytes.map { SHA256.hexHash($0) })
        }

        /// An input named `name` whose bytes had the SHA-256 (hex) `sha256`.
        public init(name: String, sha256: String?) {
            self.name = name
            self.sha256 = sha256
        }
    }

    /// One journaled merge (no values: names, hashes and counts only).
    public struct Record: Codable, Sendable, Equatable {
        /// Sorts by time: `<unix seconds>-<8 hex>`.
        public let id: String
        public let time: Date
        public let kind: Kind
        public let inputs: [Input]
        /// SHA-256 of the vault file before and after the merge.
        public let beforeSHA256: String
        public let afterSHA256: String
        /// How many changes the merge made and how many decisions it explained, per rule.
        public let changes: Int
        public let decisions: Int
        public let rules: [String: Int]
    }

    /// The files a record keeps.
    package enum Part: String {
        case before = "before.kdbx", after = "after.kdbx", explanation = "explanation.kdbx"
    }

    public let state: SyncStateStore
    public let vaultPath: String

    /// The journal of the vault at `vaultPath` in `state`.
    public init(state: SyncStateStore, vaultPath: String) {
        self.state = state
        self.vaultPath = vaultPath
    }

    /// The folder of this vault's journal.
    public var folder: String { state.stem(for: vaultPath) + ".journal" }

    /// Records a merge that wrote `after` over `before`; old records beyond the retention go.
    @discardableResult
    package func append(kind: Kind, before: Data, after: Data, sealedExplanation: Data, inputs: [Input],
                changes: Int, decisions: [FieldDecision], at time: Date = Date()) throws -> Record {
        try state.prepare()
        let directory = try DirectoryHandle.privateDirectory(folder, on: state.fileSystem)
        // Seconds, then microseconds (records of one second sort in the order they were made), then
        // randomness (two processes in one microsecond).
        let microseconds = Int((time.timeIntervalSince1970 - time.timeIntervalSince1970.rounded(.down)) * 1_000_000)
        let id = "\(Int(time.timeIntervalSince1970))-" + String(format: "%06d", microseconds)
            + (try RandomBytes.data(count: 2)).map { String(format: "%02x", $0) }.joined()
        var rules: [String: Int] = [:]
        for decision in decisions { rules[decision.rule.rawValue, default: 0] += 1 }
        let record = Record(id: id, time: Date(timeIntervalSince1970: time.timeIntervalSince1970.rounded(.down)), kind: kind,
                            inputs: inputs, beforeSHA256: SHA256.hexHash(before), afterSHA256: SHA256.hexHash(after),
                            changes: changes, decisions: decisions.count, rules: rules)
        for (part, bytes) in [(Part.before, before), (.after, after), (.explanation, sealedExplanation)] {
            _ = try DurableFile.replace(id + "." + part.rawValue, in: directory, with: bytes, policy: .onlyIf(nil))
        }
        // The summary last: a record is listed only once all its files are there.
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        _ = try DurableFile.replace(id + ".json", in: directory, with: try encoder.encode(record), policy: .onlyIf(nil))
        prune(in: directory, now: time)
        return record
    }

    /// The records, newest first.
    public func records() -> [Record] {
        guard let directory = try? DirectoryHandle(opening: folder, on: state.fileSystem) else { return [] }
        return records(in: directory)
    }

    /// The record `id`.
    public func record(_ id: String) -> Record? {
        records().first { $0.id == id }
    }

    /// The bytes of one file of record `id`.
    package func stored(_ id: String, _ part: Part) -> Data? {
        guard let directory = try? DirectoryHandle(opening: folder, on: state.fileSystem) else { return nil }
        return try? directory.read(id + "." + part.rawValue).bytes
    }

    private func records(in directory: DirectoryHandle) -> [Record] {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return directory.names().filter { $0.hasSuffix(".json") && !$0.hasPrefix(DurableFile.temporaryPrefix) }
            .compactMap { name in (try? directory.read(name).bytes).flatMap { try? decoder.decode(Record.self, from: $0) } }
            .sorted { $0.id > $1.id }
    }

    /// Removes records older than `maximumAge` and all but the newest `maximumCount`, with their files.
    private func prune(in directory: DirectoryHandle, now: Date) {
        let expired = records(in: directory).enumerated()
            .filter { $0.offset >= Self.maximumCount || now.timeIntervalSince($0.element.time) > Self.maximumAge }
            .map(\.element.id)
        guard !expired.isEmpty else { return }
        for name in directory.names() where expired.contains(where: { name.hasPrefix($0 + ".") }) {
            _ = SystemCalls.unlink(name, in: directory)
        }
    }
}

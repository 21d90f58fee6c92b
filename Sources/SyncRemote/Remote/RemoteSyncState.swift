internal import Foundation
internal import SyncFiles
internal import SyncState
internal import SyncCommit
internal import MyPassCrypto

/// What this device remembers of a vault's remote, beside the vault's own sync state: the remote's
/// ETag and content hash at the last sync, the local file's fingerprint then, and the bytes of the
/// version both sides agreed on (the base of the next merge). The server's probe verdict is kept in
/// a file of its own, from the moment it is known (a first sync that fails does not probe again).
struct RemoteRecord: Codable, Sendable {
    /// The remote URL this record is for.
    var url: String
    /// The ETag the server gave the synced version (nil: it sends none).
    var etag: String?
    /// SHA-256 of the bytes on the server after the last sync.
    var remoteSHA256: String
    /// The local file right after the last sync.
    var local: Fingerprint
}

extension SyncStateStore {
    private func remoteStem(for vaultPath: String, url: String) -> String {
        stem(for: vaultPath) + ".remote-" + SHA256.hexHash(Data(url.utf8), prefix: 6)
    }

    /// The record of `vaultPath`'s sync with `url`, and the base bytes it names.
    func remote(for vaultPath: String, url: String) -> (record: RemoteRecord, base: Data?)? {
        let stem = remoteStem(for: vaultPath, url: url)
        guard let json = try? FileReading.readAll(atPath: stem + ".json", on: fileSystem),
              let record = try? JSONDecoder().decode(RemoteRecord.self, from: json), record.url == url else { return nil }
        let base = try? FileReading.readAll(atPath: stem + ".base.kdbx", on: fileSystem)
        return (record, base.flatMap { SHA256.hexHash($0) == record.remoteSHA256 ? $0 : nil })
    }

    /// The probe verdict for `url`, if the server was probed.
    func probe(for vaultPath: String, url: String) -> ServerProbe? {
        guard let json = try? FileReading.readAll(atPath: remoteStem(for: vaultPath, url: url) + ".probe.json", on: fileSystem) else { return nil }
        return try? JSONDecoder().decode(ServerProbe.self, from: json)
    }

    /// Remembers the probe verdict for `url`.
    func recordProbe(_ probe: ServerProbe, for vaultPath: String, url: String) throws {
        try prepare()
        _ = try DurableFile.replace(atPath: remoteStem(for: vaultPath, url: url) + ".probe.json", on: fileSystem, with: try JSONEncoder().encode(probe),
                                    policy: .anything, durable: false)
    }

    /// Remembers a finished sync: `record`, and `base` (the bytes now on the server) when given.
    func recordRemote(_ record: RemoteRecord, base: Data?, for vaultPath: String) throws {
        try prepare()
        let stem = remoteStem(for: vaultPath, url: record.url)
        if let base { _ = try DurableFile.replace(atPath: stem + ".base.kdbx", on: fileSystem, with: base, policy: .anything, durable: false) }
        _ = try DurableFile.replace(atPath: stem + ".json", on: fileSystem, with: try JSONEncoder().encode(record), policy: .anything, durable: false)
    }
}

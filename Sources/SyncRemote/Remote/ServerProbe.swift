internal import Foundation
internal import SyncFiles
internal import SyncState
internal import SyncCommit
#if canImport(Glibc)
internal import Glibc
#endif

/// Whether a server's compare-and-swap can be trusted, found out once per URL on scratch files beside
/// the vault (never on the vault). WebDAV: does it send a strong ETag, refuse a wrong `If-Match` with
/// 412, and give a new ETag to a same-size rewrite within one second? (A server whose ETag is made of
/// inode, mtime in seconds and size — wsgidav — accepts a stale `If-Match` after such a rewrite: a
/// KDBX save often keeps the size.) SFTP: does its rename refuse to overwrite (`SFTPRemote.probe`)?
public struct ServerProbe: Codable, Sendable, Equatable {
    /// How saves to the server are protected.
    public enum Mode: String, Codable, Sendable {
        /// `PUT` with `If-Match` (the server passed every check).
        case etag
        /// The ETags cannot be trusted; a WebDAV lock is held around each read-merge-write.
        case lock
        /// SFTP: the upload goes to a temporary name; the vault is renamed aside, checked to be the
        /// version merged, and the upload renamed in (the server's rename must refuse to overwrite).
        case rename
        /// Neither works: the server is not written to.
        case refused
        /// Not checked yet: the check writes scratch files, so a dry run (which writes nothing)
        /// leaves it to the first sync that writes.
        case unprobed
    }

    /// The verdict.
    public let mode: Mode
    /// What failed, when something did (for `sync --json` and the message).
    public let reason: String?
    /// When it was probed (Unix seconds).
    public let probedAt: Int

    /// Probes the server of `remote`.
    static func webDAV(_ remote: WebDAVRemote) throws(RemoteFailure) -> ServerProbe {
        let scratch = remote.sibling(".mypass-sync-probe-\(UUID().uuidString.prefix(8)).tmp")
        defer { try? remote.delete(at: scratch) }
        // Start at the beginning of a second, so that the rewrite below lands in the same second.
        let fraction = Date().timeIntervalSince1970.truncatingRemainder(dividingBy: 1)
        usleep(useconds_t((1 - fraction) * 1_000_000) + 20_000)
        let (first, second, third) = (Data(repeating: 0x61, count: 256), Data(repeating: 0x62, count: 256), Data(repeating: 0x63, count: 256))
        guard case .stored(let sent) = try remote.put(first, .ifNoneMatch, at: scratch) else {
            return try fallback(remote, "If-None-Match: * was refused for a new file")
        }
        if case .stored = try remote.put(second, .ifMatch("\"mypass-sync-wrong-etag\""), at: scratch) {
            return try fallback(remote, "the server ignores If-Match (a wrong ETag was accepted)")
        }
        // A stale ETag must be refused: the tag of the first write, after a same-size rewrite in the same second.
        let firstTag = try sent == nil ? remote.etag(at: scratch) : sent
        guard case .stored = try remote.put(second, .none, at: scratch) else { return try fallback(remote, "a plain PUT was refused") }
        if let firstTag, case .stored = try remote.put(third, .ifMatch(firstTag), at: scratch) {
            return try fallback(remote, "the ETag did not change on a same-size rewrite within one second (a stale If-Match would be accepted)")
        }
        // The current ETag, once settled, must be strong and accepted.
        guard case .content(_, let settled) = try remote.settledFetch(ifNoneMatch: nil, at: scratch), let current = settled, !current.hasPrefix("W/") else {
            return try fallback(remote, "the server sends no strong ETag")
        }
        guard case .stored = try remote.put(third, .ifMatch(current), at: scratch) else {
            return try fallback(remote, "the server refused If-Match with its own current ETag")
        }
        return ServerProbe(mode: .etag, reason: nil, probedAt: Int(Date().timeIntervalSince1970))
    }

    /// Locking when the server offers it, else refused; `reason` says why ETags are not used.
    private static func fallback(_ remote: WebDAVRemote, _ reason: String) throws(RemoteFailure) -> ServerProbe {
        let mode: Mode = try remote.supportsLocks() ? .lock : .refused
        return ServerProbe(mode: mode, reason: reason, probedAt: Int(Date().timeIntervalSince1970))
    }
}

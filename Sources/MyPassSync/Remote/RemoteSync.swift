public import Foundation
internal import KDBXFormat
public import MyPassCore
internal import MyPassCrypto
#if canImport(Glibc)
internal import Glibc
#endif

/// Keeps a working copy (the vault file this device edits) and a remote vault in step: fetch the
/// remote only if it changed, merge it field by field against the version both last agreed on,
/// upload only under a precondition, read the upload back, and remember the new agreement. The
/// remote is never overwritten blindly: a lost race (412, or a read-back that differs) starts over.
public enum RemoteSync {
    /// What one sync did.
    public struct Report: Encodable, Sendable {
        public let schema = 1
        /// The remote URL.
        public let remote: String
        /// How the upload was protected (`etag` or `lock`) and, if ETags are not trusted, why.
        public let mode: ServerProbe.Mode
        public let modeReason: String?
        /// The remote had changed since the last sync (it was fetched and merged).
        public let remoteChanged: Bool
        /// What the merge took from the remote (names of objects and fields, never values).
        public let mergedFromRemote: [Change]
        /// The working copy was written.
        public let wroteLocal: Bool
        /// The remote was written.
        public let uploaded: Bool
        /// Rounds run (more than one: someone else wrote in between).
        public let attempts: Int
        /// Nothing was written (`--dry-run`).
        public let dryRun: Bool
    }

    /// Why a sync stopped without an agreement.
    public enum Refusal: Error, CustomStringConvertible, Sendable {
        /// The server's compare-and-swap cannot be trusted and it offers no locks.
        case untrustworthyServer(url: String, reason: String)
        /// Other writers kept winning the race.
        case keptLosing(url: String, attempts: Int)
        /// The remote does not open with the working copy's credentials.
        case otherCredentials(url: String)

        public var description: String {
            switch self {
            case .untrustworthyServer(let url, let reason): "\(url): not written: \(reason), and the server offers no WebDAV locks"
            case .keptLosing(let url, let attempts): "\(url): another writer changed the vault during each of \(attempts) attempts; nothing was overwritten"
            case .otherCredentials(let url): "\(url): the remote vault does not open with this vault's credentials (key changed on another device?)"
            }
        }
    }

    /// Rounds before giving up (each lost round means someone else's write landed and was merged).
    public static let maximumAttempts = 5

    /// Syncs the working copy at `vaultPath` with `remote`.
    public static func run(vaultPath: String, remote: WebDAVRemote, credentials: VaultCredentials, state: SyncStateStore,
                           dryRun: Bool = false, maximumKDFMemory: UInt64? = nil) throws -> Report {
        let probe: ServerProbe
        if let known = state.probe(for: vaultPath, url: remote.url) {
            probe = known
        } else {
            probe = try ServerProbe.run(remote)
            if !dryRun { try state.recordProbe(probe, for: vaultPath, url: remote.url) }
        }
        guard probe.mode != .refused else { throw Refusal.untrustworthyServer(url: remote.url, reason: probe.reason ?? "unknown") }
        var merged: [Change] = []
        var remoteChanged = false, wroteLocal = false
        for attempt in 1...maximumAttempts {
            let token = probe.mode == .lock && !dryRun ? try remote.lock() : nil
            defer { if let token { try? remote.unlock(token) } }
            let known = state.remote(for: vaultPath, url: remote.url)
            var file = try VaultFile.read(vaultPath, maximumKDFMemory: maximumKDFMemory)
            let usableTag = known?.base != nil ? known?.record.etag : nil
            let fetched = try remote.settledFetch(ifNoneMatch: usableTag)
            var remoteTag: String?
            switch fetched {
            case .unchanged:
                if let known, file.fingerprint.sameContent(as: known.record.local) {
                    return Report(remote: remote.url, mode: probe.mode, modeReason: probe.reason, remoteChanged: remoteChanged,
                                  mergedFromRemote: merged, wroteLocal: wroteLocal, uploaded: false, attempts: attempt, dryRun: dryRun)
                }
                remoteTag = known?.record.etag
            case .missing:
                break
            case .content(let bytes, let etag) where bytes.isEmpty:
                // No vault yet: an empty file is what a WebDAV LOCK of a new name leaves (RFC 4918).
                remoteTag = etag
            case .content(let bytes, let etag):
                remoteChanged = true
                remoteTag = etag
                let unlocked = try file.unlock(credentials)
                let opened = Result { try KDBXReader.open(bytes, key: credentials.key, cachedKey: nil, limits: file.limits) }
                if case .failure(let error) = opened, FailureKind(of: error) == .wrongCredentials {
                    throw Refusal.otherCredentials(url: remote.url)
                }
                let theirs = try opened.get().vault
                let base = known?.base.flatMap { try? KDBXReader.open($0, key: credentials.key, cachedKey: nil, limits: file.limits).vault }
                let (result, step) = try MergeJob.merge(theirs, from: remote.url, into: unlocked.vault, base: base.map { .remembered($0) } ?? .none)
                merged = step.changes
                if result != unlocked.vault && !dryRun {
                    let session = try unlocked.session(state: state, settings: DeviceSettings.load())
                    session.update(result)
                    wroteLocal = try session.saveMerging().wroteFile || wroteLocal
                    file = try VaultFile.read(vaultPath, maximumKDFMemory: maximumKDFMemory)
                } else if result != unlocked.vault {
                    wroteLocal = true
                }
                if result == theirs {
                    // The remote holds everything: nothing to upload; the agreement is the remote's bytes.
                    if !dryRun {
                        try state.recordRemote(RemoteRecord(url: remote.url, etag: etag, remoteSHA256: SHA256.hexHash(bytes),
                                                            local: file.fingerprint), base: bytes, for: vaultPath)
                    }
                    return Report(remote: remote.url, mode: probe.mode, modeReason: probe.reason, remoteChanged: true,
                                  mergedFromRemote: merged, wroteLocal: wroteLocal, uploaded: false, attempts: attempt, dryRun: dryRun)
                }
            }
            if dryRun {
                return Report(remote: remote.url, mode: probe.mode, modeReason: probe.reason, remoteChanged: remoteChanged,
                              mergedFromRemote: merged, wroteLocal: wroteLocal, uploaded: true, attempts: attempt, dryRun: true)
            }
            // Upload the working copy as it is on disk now, under a precondition.
            if attempt == 1 { TestHooks.beforeUpload() }
            let upload = file.bytes
            let precondition: WebDAVRemote.Precondition = token.map { .lock($0) } ?? remoteTag.map { .ifMatch($0) } ?? .ifNoneMatch
            guard case .stored = try remote.put(upload, precondition) else { continue }
            // Read back: the server must hold exactly what was sent (else someone else's write won).
            guard case .content(let stored, let storedTag) = try remote.settledFetch(ifNoneMatch: nil), stored == upload else { continue }
            // The read-back's settled ETag: the tag of exactly the bytes compared.
            let tag = storedTag
            try state.recordRemote(RemoteRecord(url: remote.url, etag: tag, remoteSHA256: SHA256.hexHash(upload), local: file.fingerprint),
                                   base: upload, for: vaultPath)
            return Report(remote: remote.url, mode: probe.mode, modeReason: probe.reason, remoteChanged: remoteChanged,
                          mergedFromRemote: merged, wroteLocal: wroteLocal, uploaded: true, attempts: attempt, dryRun: false)
        }
        throw Refusal.keptLosing(url: remote.url, attempts: maximumAttempts)
    }
}

/// The documented test convenience `MYPASS_SYNC_BEFORE_UPLOAD=PATH`: before its first upload a sync
/// creates `PATH.waiting` and waits (up to 30 s) until `PATH.go` exists, so that a test can write
/// the remote in exactly the window a compare-and-swap protects. Unset, it does nothing.
enum TestHooks {
    static func beforeUpload() {
        guard let path = ProcessInfo.processInfo.environment["MYPASS_SYNC_BEFORE_UPLOAD"], !path.isEmpty else { return }
        FileManager.default.createFile(atPath: path + ".waiting", contents: Data())
        let deadline = Date().addingTimeInterval(30)
        while !FileManager.default.fileExists(atPath: path + ".go") && Date() < deadline { usleep(20_000) }
    }
}

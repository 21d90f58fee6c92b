internal import Foundation
internal import SyncFiles
public import SyncState
public import SyncCommit
internal import KDBXFormat
public import MyPassCore
internal import MyPassCrypto
internal import MyPassMerge
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
        /// The server answered an upload with success but still holds the version it replaced.
        case notStored(url: String)

        public var description: String {
            switch self {
            case .untrustworthyServer(let url, let reason): "\(url): not written: \(reason), and the server offers no WebDAV locks"
            case .keptLosing(let url, let attempts): "\(url): another writer changed the vault during each of \(attempts) attempts; nothing was overwritten"
            case .otherCredentials(let url): "\(url): the remote vault does not open with this vault's credentials (key changed on another device?)"
            case .notStored(let url):
                "\(url): the server answered the upload with success but did not store it (it still holds the version before); "
                    + "the server or a proxy in front of it is broken, nothing was overwritten"
            }
        }
    }

    /// Rounds before giving up (each lost round means someone else's write landed and was merged).
    public static let maximumAttempts = 5

    /// Syncs the working copy at `vaultPath` with `target`; saves of the working copy follow the
    /// device's `settings` (read once by the caller).
    public static func run(vaultPath: String, remote target: RemoteTarget, credentials: VaultCredentials, state: SyncStateStore,
                           settings: DeviceSettings, dryRun: Bool = false, maximumKDFMemory: UInt64? = nil) throws -> Report {
        var remote = target.vault
        let probe: ServerProbe
        if let known = state.probe(for: vaultPath, url: remote.url) {
            probe = known
        } else if dryRun {
            // The check writes scratch files on the server; a dry run writes nothing anywhere.
            probe = ServerProbe(mode: .unprobed, reason: "checked on the first sync that writes", probedAt: Int(Date().timeIntervalSince1970))
        } else {
            probe = try remote.probe()
            try state.recordProbe(probe, for: vaultPath, url: remote.url)
        }
        guard probe.mode != .refused else { throw Refusal.untrustworthyServer(url: remote.url, reason: probe.reason ?? "unknown") }
        var merged: [Change] = []
        var remoteChanged = false, wroteLocal = false
        var displaced: Data?
        func report(uploaded: Bool, attempts: Int) -> Report {
            Report(remote: remote.url, mode: probe.mode, modeReason: probe.reason, remoteChanged: remoteChanged,
                   mergedFromRemote: merged, wroteLocal: wroteLocal, uploaded: uploaded, attempts: attempts, dryRun: dryRun)
        }
        for attempt in 1...maximumAttempts {
            let token = probe.mode == .lock && !dryRun ? try remote.lock() : nil
            defer { if let token { try? remote.unlock(token) } }
            let known = state.remote(for: vaultPath, url: remote.url)
            var file = try VaultFile.read(vaultPath, on: state.fileSystem, maximumKDFMemory: maximumKDFMemory)
            // The server's version is another version of this vault: read and opened within the
            // budget for versions that did not come from this device.
            let sizeLimit = file.foreignVersionBudget.sizeLimit
            remote.downloadLimit = sizeLimit
            let merger = Merger(vaultPath: vaultPath, url: remote.url, credentials: credentials, state: state, settings: settings, dryRun: dryRun,
                                base: known?.base, maximumKDFMemory: maximumKDFMemory)
            if let bytes = displaced {
                // Another writer's version that a lost replace could not put back in place.
                displaced = nil
                let outcome = try merger.merge(bytes, into: &file)
                merged += outcome.changes
                wroteLocal = outcome.wroteLocal || wroteLocal
            }
            let usableTag = known?.base != nil ? known?.record.etag : nil
            var fetched = try remote.fetch(ifChangedFrom: usableTag)
            if case .content(let bytes, _) = fetched, let known, known.base != nil, SHA256.hexHash(bytes) == known.record.remoteSHA256 {
                fetched = .unchanged  // the same bytes as at the last sync (a server without tags sends them every time)
            }
            let expected: RemoteExpectation
            switch fetched {
            case .unchanged:
                if let known, file.fingerprint.sameContent(as: known.record.local) { return report(uploaded: false, attempts: attempt) }
                expected = known.map { .version(tag: $0.record.etag, sha256: $0.record.remoteSHA256) } ?? .absent
            case .missing:
                expected = .absent
            case .content(let bytes, let tag) where bytes.isEmpty:
                // No vault yet: an empty file is what a WebDAV LOCK of a new name leaves (RFC 4918).
                expected = .version(tag: tag, sha256: SHA256.hexHash(bytes))
            case .content(let bytes, let tag):
                remoteChanged = true
                expected = .version(tag: tag, sha256: SHA256.hexHash(bytes))
                let outcome = try merger.merge(bytes, into: &file)
                merged = outcome.changes
                wroteLocal = outcome.wroteLocal || wroteLocal
                if outcome.remoteHoldsAll {
                    // The remote holds everything: nothing to upload; the agreement is the remote's bytes.
                    if !dryRun {
                        try state.recordRemote(RemoteRecord(url: remote.url, etag: tag, remoteSHA256: SHA256.hexHash(bytes),
                                                            local: file.fingerprint), base: bytes, for: vaultPath)
                    }
                    return report(uploaded: false, attempts: attempt)
                }
            }
            if dryRun { return report(uploaded: true, attempts: attempt) }
            // Upload the working copy as it is on disk now, only over the version just merged.
            #if MYPASS_TEST_HOOKS
            if attempt == 1 { TestHooks.beforeUpload() }
            #endif
            let upload = file.bytes
            remote.downloadLimit = max(sizeLimit, Int64(upload.count))  // the read-back of the upload
            let replaced = try remote.replace(with: upload, expected: expected, lockToken: token)
            guard case .stored = replaced else {
                if case .lostRace(let other?) = replaced { displaced = other }
                continue
            }
            // Read back: the server must hold exactly what was sent (else someone else's write won,
            // or the server did not store it at all).
            let readBack = try remote.fetch(ifChangedFrom: nil)
            guard case .content(let stored, let storedTag) = readBack, stored == upload else {
                if Self.stillHolds(expected, readBack) { throw Refusal.notStored(url: remote.url) }
                continue
            }
            try state.recordRemote(RemoteRecord(url: remote.url, etag: storedTag, remoteSHA256: SHA256.hexHash(upload), local: file.fingerprint),
                                   base: upload, for: vaultPath)
            return report(uploaded: true, attempts: attempt)
        }
        throw Refusal.keptLosing(url: remote.url, attempts: maximumAttempts)
    }

    /// Whether `readBack` is still the version an upload was to replace (`expected`).
    private static func stillHolds(_ expected: RemoteExpectation, _ readBack: RemoteFetch) -> Bool {
        switch (expected, readBack) {
        case (.absent, .missing): true
        case (.version(_, let sha256), .content(let bytes, _)): SHA256.hexHash(bytes) == sha256
        default: false
        }
    }
}

/// Merges a version of the vault from the server into the working copy (field by field, against the
/// version both sides last agreed on) and saves the working copy by its compare-and-swap.
private struct Merger {
    let vaultPath: String
    let url: String
    let credentials: VaultCredentials
    let state: SyncStateStore
    let settings: DeviceSettings
    let dryRun: Bool
    /// The bytes both sides last agreed on (nil: first sync, or the base was lost).
    let base: Data?
    let maximumKDFMemory: UInt64?

    struct Outcome {
        /// What came from the remote (names, never values).
        let changes: [Change]
        /// The working copy was (or, in a dry run, would be) written.
        let wroteLocal: Bool
        /// The merged vault is exactly the remote's: nothing to upload.
        let remoteHoldsAll: Bool
    }

    /// Merges `bytes` into the working copy `file`; `file` is re-read when it was saved.
    func merge(_ bytes: Data, into file: inout VaultFile) throws -> Outcome {
        let unlocked = try file.unlock(credentials)
        let opened = Result { try ForeignVersion.open(bytes, key: credentials.key, cachedKey: nil, budget: file.foreignVersionBudget) }
        if case .failure(let error) = opened, FailureKind(of: error) == .wrongCredentials {
            throw RemoteSync.Refusal.otherCredentials(url: url)
        }
        if case .failure(KDBXError.resourceCapExceeded(let detail)) = opened {
            throw RemoteFailure.tooCostly(url: url, detail: detail)
        }
        let theirs = try opened.get().vault
        let baseOpened = base.flatMap { try? KDBXReader.open($0, key: credentials.key, cachedKey: nil, limits: file.limits) }
        // The server's cipher, KDF and compression are merged too (MERGE.md rule 13), against the base's.
        let input = MergeCommit.Input(name: url, vault: theirs, sha256: SHA256.hexHash(bytes), base: baseOpened.map { .remembered($0.vault) } ?? .none,
                                      formats: MergeCommit.Formats(input: try opened.get().settings, base: baseOpened?.settings))
        let merged = try MergeCommit.merge([input], into: unlocked.vault, format: unlocked.opened.settings)
        let step = merged.steps[0]
        // A dry run says whether the merge would write; otherwise the pipeline decides and writes.
        var wrote = merged.bringsContent
        if !dryRun {
            let session = try unlocked.session(state: state, settings: settings)
            wrote = try MergeCommit.write(.merged(merged), through: session, journal: .sync).wroteFile
            if wrote { file = try VaultFile.read(vaultPath, on: state.fileSystem, maximumKDFMemory: maximumKDFMemory) }
        }
        return Outcome(changes: step.changes, wroteLocal: wrote, remoteHoldsAll: VaultDiff.sameContent(theirs, merged.vault))
    }
}

/// The documented test conveniences `MYPASS_SYNC_BEFORE_UPLOAD=PATH` (before a sync's first upload)
/// and `MYPASS_SYNC_BEFORE_RENAME_IN=PATH` (SFTP: the vault renamed aside, the upload not yet renamed
/// in): the sync creates `PATH.waiting` and waits (up to 30 s) until `PATH.go` exists, so that a test
/// can write the remote, or kill the process, in exactly the window a compare-and-swap protects.
/// Unset, they do nothing; a release build (`MYPASS_TEST_HOOKS` undefined) has none.
#if MYPASS_TEST_HOOKS
enum TestHooks {
    static func beforeUpload() { pause("MYPASS_SYNC_BEFORE_UPLOAD") }

    static func beforeRenameIn() { pause("MYPASS_SYNC_BEFORE_RENAME_IN") }

    private static func pause(_ variable: String) {
        guard let path = ProcessInfo.processInfo.environment[variable], !path.isEmpty else { return }
        _ = FileManager.default.createFile(atPath: path + ".waiting", contents: Data())
        let deadline = Date().addingTimeInterval(30)
        while !FileManager.default.fileExists(atPath: path + ".go") && Date() < deadline { usleep(20_000) }
    }
}
#endif

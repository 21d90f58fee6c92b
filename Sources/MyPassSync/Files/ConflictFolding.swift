internal import Foundation
public import KDBXFormat
public import MyPassCore
public import MyPassMerge

/// Folds the sync-conflict copies of a vault into it: each copy merged three-way (base: this device's
/// sync state when known, else inferred from history), the result saved by compare-and-swap, and the
/// copies moved into `merged-conflicts/` beside the vault — never deleted (with Syncthing a deletion
/// would propagate to every device). Copies that do not open with the vault's credentials are
/// reported and left alone.
public enum ConflictFolding {
    /// What happened to one copy.
    public struct Outcome: Sendable, Encodable {
        public let copy: String
        public let engine: ConflictCopies.Engine
        /// merged, wouldMerge (dry run), otherCredentials, otherDatabase (another root group), unreadable
        public let result: String
        public let changes: [Change]
        public let movedTo: String?
    }

    /// Merges the copies of the vault `session` holds against `base` (the version this device had
    /// synced before this run; nil: inferred from history); `dryRun` merges in memory only. Copies that
    /// share the vault's KDF salt (written by mypass-sync) reuse `cachedKey` instead of running the KDF.
    public static func fold(
        _ copies: [ConflictCopies.Copy], into session: SyncSession, base: Vault?, key: CompositeKey, cachedKey: DerivedKey? = nil,
        limits: ResourceLimits, dryRun: Bool
    ) throws -> [Outcome] {
        var outcomes: [Outcome] = []
        var merged: [(ConflictCopies.Copy, [Change])] = []
        var vault = session.vault
        for copy in copies {
            let opened: OpenedVault
            do {
                opened = try KDBXReader.open(FileReading.readAll(atPath: copy.path), key: key, cachedKey: cachedKey, limits: limits)
            } catch KDBXError.wrongCredentials {
                outcomes.append(Outcome(copy: copy.path, engine: copy.engine, result: "otherCredentials", changes: [], movedTo: nil))
                continue
            } catch {
                outcomes.append(Outcome(copy: copy.path, engine: copy.engine, result: "unreadable", changes: [], movedTo: nil))
                continue
            }
            guard opened.vault.root.uuid == vault.root.uuid else {
                outcomes.append(Outcome(copy: copy.path, engine: copy.engine, result: "otherDatabase", changes: [], movedTo: nil))
                continue
            }
            // The base only where both sides descend from it; else each entry's ancestor is inferred.
            let fitting = base.flatMap { VaultMerger.descends(vault, from: $0) && VaultMerger.descends(opened.vault, from: $0) ? $0 : nil }
            let result = try VaultMerger.merge(base: fitting, local: vault, remote: opened.vault)
            DeferredRelease.drop(opened)
            vault = result.vault
            merged.append((copy, result.changes))
        }
        guard !dryRun else {
            return outcomes + merged.map { Outcome(copy: $0.0.path, engine: $0.0.engine, result: "wouldMerge", changes: $0.1, movedTo: nil) }
        }
        if !merged.isEmpty {
            session.update(vault)
            _ = try session.saveMerging()
        }
        for (copy, changes) in merged {
            outcomes.append(Outcome(copy: copy.path, engine: copy.engine, result: "merged", changes: changes,
                                    movedTo: try moveAside(copy.path)))
        }
        return outcomes
    }

    /// Moves `path` into `merged-conflicts/` in its own folder (0700), keeping its name (a numbered
    /// suffix when that name is taken).
    static func moveAside(_ path: String) throws -> String {
        let directory = (path as NSString).deletingLastPathComponent.isEmpty ? "." : (path as NSString).deletingLastPathComponent
        let folder = directory + "/merged-conflicts"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let name = (path as NSString).lastPathComponent
        var destination = folder + "/" + name
        var counter = 1
        while FileManager.default.fileExists(atPath: destination) {
            destination = folder + "/" + (name as NSString).deletingPathExtension + "-\(counter)." + (name as NSString).pathExtension
            counter += 1
        }
        try FileManager.default.moveItem(atPath: path, toPath: destination)
        return destination
    }
}

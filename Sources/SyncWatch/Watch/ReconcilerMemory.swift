public import Foundation
public import SyncFiles
internal import SyncState
public import SyncCommit

extension Reconciler {
    /// What the reconciler keeps from one check to the next: the watcher holds it, only `Reconciler`
    /// functions change it.
    public struct Memory: Sendable {
        /// The files the vault has been, newest last (seeded from `SeenVaultFiles`): a copy that is one
        /// of them is this device's own version, renamed aside by the sync engine.
        public internal(set) var vaultFiles: [FileIdentity] = []
        /// When each copy from another device was first seen.
        var foreignCopiesSeen: [CopyFile: Date] = [:]
        /// Copies that could not be merged, as they were then: not tried again until they change.
        var failedCopies: [String: CopyFile] = [:]
        /// Why each of them failed (the fold's result).
        var failureReasons: [String: ForeignVersion.Refusal] = [:]
        /// Copies already reported (copy policy `report`, or left after a failure).
        var reportedCopies: Set<String> = []
        /// The version that looked like a rollback, and since when.
        var rollbackSeen: (sha256: String, since: Date)?
        /// Pending versions found not to be contained in a disk version: `pending sha -> disk sha`.
        var notContained: [String: String] = [:]
        /// The version this device's watcher last wrote, until a check has seen it on disk.
        var ownWrite: Fingerprint?
        /// The problem last told (an error, an unreadable file).
        var lastProblem: (kind: WatchEvent.Kind, detail: String)?
        /// Copies were put off because the vault's allowance for opening them was spent, and that was
        /// told (once, until a fold puts none off).
        var deferralTold = false
        /// A transfer into the folder was told and is still awaited.
        var transferTold = false
        /// The vault's absence was told (its return is told once it is back).
        var missingTold = false
        /// A wait for another device to rebuild the vault was told.
        var rebuildWaitTold = false
        /// A rollback held for its copy was told.
        var rollbackHoldTold = false

        /// Nothing remembered yet.
        public init() {}

        /// Remembers `vaultFiles` (oldest first) as files the vault has been, and `failedCopies` as
        /// copies that could not be merged (an earlier run's, not opened again while unchanged).
        public init(vaultFiles: [FileIdentity], failedCopies: [(copy: CopyFile, reason: ForeignVersion.Refusal)] = []) {
            self.vaultFiles = vaultFiles
            for (copy, reason) in failedCopies { copyFailed(copy, reason: reason) }
        }

        /// Whether `copy` is a file the vault has been: this device's own version, renamed aside.
        func isOwnVersion(_ copy: CopyFile) -> Bool {
            vaultFiles.contains { $0.isSameFile(as: copy.identity) }
        }

        /// Remembers the vault's file `identity` (newest), as many as `SeenVaultFiles` keeps.
        mutating func noteVaultFile(_ identity: FileIdentity) {
            guard vaultFiles.last != identity else { return }
            vaultFiles.removeAll { $0 == identity }
            vaultFiles.append(identity)
            if vaultFiles.count > SeenVaultFiles.maximumCount { vaultFiles.removeFirst(vaultFiles.count - SeenVaultFiles.maximumCount) }
        }

        /// A copy could not be merged as it is now (`reason`): left until it changes.
        mutating func copyFailed(_ copy: CopyFile, reason: ForeignVersion.Refusal) {
            failedCopies[copy.path] = copy
            failureReasons[copy.path] = reason
        }

        /// Whether `copy` was already reported; marks it reported.
        mutating func firstReport(of copy: String) -> Bool { reportedCopies.insert(copy).inserted }

        /// Why `copy` failed when it was last tried (unreadable when not remembered).
        func failure(of copy: String) -> ForeignVersion.Refusal { failureReasons[copy] ?? .unreadable }
    }
}

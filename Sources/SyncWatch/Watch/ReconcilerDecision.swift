public import SyncCommit

extension Reconciler {
    /// A person's decision on the vault's version on disk, handed to one plan (`plan(_:…decision:)`):
    /// the change under `ask`, or a version refused (a rollback, another database).
    public struct Decision: Sendable, Equatable {
        /// `reload`: take the version as it is, this device's versions it lacks set aside. `merge`: take
        /// it with this device's versions merged back (two databases are never merged). `overwrite`:
        /// write this device's version (the base) over it, the disk's kept as a backup.
        public var choice: SyncSession.Decision
        /// The SHA-256 of the version on disk the person was asked about (nil: whichever is on
        /// disk): another one there now is asked about, never acted on.
        public var version: String?

        /// `choice` about the version whose SHA-256 is `version`.
        public init(_ choice: SyncSession.Decision, about version: String? = nil) {
            self.choice = choice
            self.version = version
        }

        /// Whether it is about `sha256` (or about whichever version is on disk).
        func isAbout(_ sha256: String) -> Bool { version == nil || version == sha256 }

        /// Whether it takes `version`, refused for `problem`: as it is (`reload`), or with this
        /// device's versions merged back (`merge`, a rollback only).
        func takes(_ version: Version, refusedFor problem: Refusal) -> Bool {
            guard isAbout(version.sha256) else { return false }
            switch (problem, choice) {
            case (_, .reload), (.rollback, .merge): return true
            case (.otherDatabase, .merge), (_, .overwrite): return false
            }
        }

        /// The policy the plan follows for the version on disk under this decision.
        var vaultPolicy: VaultWatcher.Policy { choice == .reload ? .reload : .merge }
    }
}

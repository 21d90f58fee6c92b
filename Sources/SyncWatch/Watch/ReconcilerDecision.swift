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

    /// Whether a vault whose last event is `kind` waits for a person's decision: a change on disk
    /// under the `ask` policy, or a version refused (a rollback, another database).
    public static func waitsForDecision(after kind: WatchEvent.Kind) -> Bool {
        kind == .decisionNeeded || kind == .refused
    }

    /// The version on disk (SHA-256) a decision is about after `event` (nil: none is asked for).
    public static func versionToDecide(after event: WatchEvent) -> String? {
        switch event {
        case .refused(_, _, let version), .decisionNeeded(_, let version): version
        default: nil
        }
    }

    /// Whether a watch started after `last` (the vault's last event before it) may hold a rollback
    /// for its copy: not when the version was refused already (then a decision failed, a pause, a
    /// reread): it was held once, and is refused again at once.
    public static func holdsRollback(after last: WatchEvent.Kind?) -> Bool {
        last != .refused
    }
}

public import Foundation
public import SyncWatch

/// What `daemon status` answers: each configured vault, its state, what last happened to it.
/// Names, counts and times only, never a secret.
public struct DaemonStatus: Sendable, Codable, Equatable {
    public var schema = 1
    public var vaults: [Vault]

    /// One vault as the daemon sees it.
    public struct Vault: Sendable, Codable, Equatable {
        public var path: String
        public var state: State
        public var lastEvent: LastEvent?
        /// Conflict copies beside the vault now.
        public var conflictCopies: Int
        public var lastMerge: LastMerge?
        public var credentials: CredentialReference.Kind
        /// What the error or decision is about, in one line (nil otherwise).
        public var detail: String?
        /// The vault's shared groups (KeeShare) as the last pass found them.
        public var shares: [Share] = []

        private enum CodingKeys: String, CodingKey { case path, state, lastEvent, conflictCopies, lastMerge, credentials, detail, shares }

        /// Writes `lastEvent` and `lastMerge` as null when there is none (the schema's keys are always there).
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(path, forKey: .path)
            try container.encode(state, forKey: .state)
            try container.encode(lastEvent, forKey: .lastEvent)
            try container.encode(conflictCopies, forKey: .conflictCopies)
            try container.encode(lastMerge, forKey: .lastMerge)
            try container.encode(credentials, forKey: .credentials)
            try container.encodeIfPresent(detail, forKey: .detail)
            try container.encode(shares, forKey: .shares)
        }

        /// Reads what `encode` writes (`shares` may be absent: an older daemon's answer).
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            path = try container.decode(String.self, forKey: .path)
            state = try container.decode(State.self, forKey: .state)
            lastEvent = try container.decodeIfPresent(LastEvent.self, forKey: .lastEvent)
            conflictCopies = try container.decode(Int.self, forKey: .conflictCopies)
            lastMerge = try container.decodeIfPresent(LastMerge.self, forKey: .lastMerge)
            credentials = try container.decode(CredentialReference.Kind.self, forKey: .credentials)
            detail = try container.decodeIfPresent(String.self, forKey: .detail)
            shares = try container.decodeIfPresent([Share].self, forKey: .shares) ?? []
        }

        /// A vault with these parts.
        public init(path: String, state: State, lastEvent: LastEvent?, conflictCopies: Int, lastMerge: LastMerge?,
                    credentials: CredentialReference.Kind, detail: String?, shares: [Share] = []) {
            self.path = path
            self.state = state
            self.lastEvent = lastEvent
            self.conflictCopies = conflictCopies
            self.lastMerge = lastMerge
            self.credentials = credentials
            self.detail = detail
            self.shares = shares
        }
    }

    /// One shared group of a vault: its path, type, container, whether approved here, last import and export.
    public struct Share: Sendable, Codable, Equatable {
        public var group: String
        public var type: String?
        public var container: String?
        public var approved: Bool
        public var problem: String?
        public var lastImport: Date?
        public var lastExport: Date?
    }

    /// A vault's state.
    public enum State: String, Sendable, Codable, Equatable {
        /// Watched; nothing waits.
        case watching
        /// Paused over the control socket: nothing is read or written until resumed.
        case paused
        /// Waiting for a transfer, a copy, a missing vault, another device's rebuild.
        case waiting
        /// Under the `ask` policy the vault changed on disk, or a version was refused (a rollback,
        /// another database): `daemon decide`.
        case needsDecision
        /// The credentials did not open it, its key changed, it cannot be read, a step failed.
        case error

        /// The state the last event leaves a vault in.
        public init(after kind: WatchEvent.Kind) {
            switch kind {
            case .decisionNeeded, .refused: self = .needsDecision
            case .error, .keyChanged, .unreadable: self = .error
            case .waitingForSync, .waitingForCopy, .waitingForRebuild, .copiesWaiting, .vaultMissing: self = .waiting
            default: self = .watching
            }
        }
    }

    /// The last watch event of a vault.
    public struct LastEvent: Sendable, Codable, Equatable {
        public var kind: String
        public var time: Date
    }

    /// The vault's last journaled merge.
    public struct LastMerge: Sendable, Codable, Equatable {
        /// The journal record's id (`mypass-sync journal show`, `undo`).
        public var journal: String
        public var time: Date
    }
}

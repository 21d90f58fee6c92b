public import Foundation

/// How one merge decided one property of one object (`merge --explain`): the state of the property in
/// the ancestor, the local and the remote version, the side the result took, and the rule that
/// decided, named as in MERGE.md. A protected value is never shown: only whether it is set, whether a
/// side changed it, and a fingerprint salted per merge (two equal secrets can be recognised as equal
/// within one explanation, and in no other).
public struct FieldDecision: Sendable, Hashable, Codable {
    /// The rule that decided.
    public enum Rule: String, Sendable, Hashable, Codable, CaseIterable {
        /// Only the local side changed it since the ancestor: local kept.
        case onlyLocalChanged
        /// Only the remote side changed it: remote taken.
        case onlyRemoteChanged
        /// Both changed it to the same value.
        case bothSameValue
        /// Both changed it differently: the newer version's value won (the other is in the entry's history).
        case conflictNewerWins
        /// Both changed an entry's field differently: the side that changed that field later won (its
        /// change time is when its line of versions first held the value); the other version is in history.
        case conflictFieldChangedLater
        /// No ancestor is known and the sides differ: the newer version's value won.
        case noAncestorNewerWins
        /// One side's version is older than the ancestor (a stale copy): its difference is not an edit.
        case staleVersionIgnored
        /// Tags: additions and removals of both sides combined.
        case setUnion
        /// The object exists on one side only and the other has no newer deletion of it: kept or added.
        case onlyOneSideHasIt
        /// One side deleted it, the other edited it: the later of the deletion and the edit won.
        case deleteVersusEdit
        /// One side deleted it without having seen the other side's change since the ancestor (made
        /// before or after the deletion): kept, with the change, in the recycle bin, and no tombstone.
        case deletionDidNotSeeEdit
        /// One side dropped it without a tombstone, the other did not change it, and the base is
        /// certainly common to both (given by the user or the sync engine): deleted, with a tombstone.
        case droppedFromCertainBase
        /// Moved on both sides: the later LocationChanged won; moved on one side: that move.
        case moveByLocationChanged
        /// The key derivation changed differently on both sides and the newer change weakens it (fewer
        /// rounds, less memory or iterations, AES-KDF over Argon2): the stronger KDF kept (MERGE.md rule 13).
        case strongerKDFKept
    }

    /// Where the ancestor came from.
    public enum Ancestor: String, Sendable, Hashable, Codable {
        /// The version this device last synced, or `--base`.
        case base
        /// The newest version both sides hold in history (no usable base).
        case inferredFromHistory
        /// None: the two sides share no version of it.
        case none
    }

    /// The side the result's value came from.
    public enum Side: String, Sendable, Hashable, Codable {
        case local, remote
        /// Neither alone (tags combined from both).
        case both
    }

    /// The kind of object.
    public let subject: Change.Subject
    /// The object.
    public let uuid: UUID?
    /// The object's path (`/Internet/GitHub`).
    public let path: String
    /// The property (`Password`, `Tags`, `Attachment 'a.txt'`, `Location`, `Object`).
    public let field: String
    public let ancestor: Ancestor
    /// The property in the ancestor (nil: no ancestor).
    public let base: FieldState?
    public let local: FieldState
    public let remote: FieldState
    public let result: Side
    public let rule: Rule
    /// The versions' modification times, for the rules that compare them.
    public let localTime: Timestamp?
    public let remoteTime: Timestamp?

    /// A decision with these values.
    public init(subject: Change.Subject, uuid: UUID?, path: String, field: String, ancestor: Ancestor, base: FieldState?,
                local: FieldState, remote: FieldState, result: Side, rule: Rule, localTime: Timestamp? = nil, remoteTime: Timestamp? = nil) {
        self.subject = subject
        self.uuid = uuid
        self.path = path
        self.field = field
        self.ancestor = ancestor
        self.base = base
        self.local = local
        self.remote = remote
        self.result = result
        self.rule = rule
        self.localTime = localTime
        self.remoteTime = remoteTime
    }

    private enum CodingKeys: String, CodingKey {
        case subject, uuid, path, field, ancestor, base, local, remote, result, rule, localTime, remoteTime
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        subject = try container.decode(Change.Subject.self, forKey: .subject)
        uuid = try container.decodeIfPresent(String.self, forKey: .uuid).flatMap(UUID.init(uuidString:))
        path = try container.decode(String.self, forKey: .path)
        field = try container.decode(String.self, forKey: .field)
        ancestor = try container.decode(Ancestor.self, forKey: .ancestor)
        base = try container.decodeIfPresent(FieldState.self, forKey: .base)
        local = try container.decode(FieldState.self, forKey: .local)
        remote = try container.decode(FieldState.self, forKey: .remote)
        result = try container.decode(Side.self, forKey: .result)
        rule = try container.decode(Rule.self, forKey: .rule)
        localTime = try container.decodeIfPresent(String.self, forKey: .localTime).flatMap(Timestamp.init(iso8601:))
        remoteTime = try container.decodeIfPresent(String.self, forKey: .remoteTime).flatMap(Timestamp.init(iso8601:))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(subject, forKey: .subject)
        try container.encodeIfPresent(uuid?.canonicalString, forKey: .uuid)
        try container.encode(path, forKey: .path)
        try container.encode(field, forKey: .field)
        try container.encode(ancestor, forKey: .ancestor)
        try container.encodeIfPresent(base, forKey: .base)
        try container.encode(local, forKey: .local)
        try container.encode(remote, forKey: .remote)
        try container.encode(result, forKey: .result)
        try container.encode(rule, forKey: .rule)
        try container.encodeIfPresent(localTime?.iso8601, forKey: .localTime)
        try container.encodeIfPresent(remoteTime?.iso8601, forKey: .remoteTime)
    }
}

/// One property's state in one version, as an explanation may show it.
public enum FieldState: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Not there.
    case absent
    /// A value that is not secret.
    case value(String)
    /// A protected value: only its salted fingerprint.
    case secret(fingerprint: String)

    private enum CodingKeys: String, CodingKey { case absent, value, protected, fingerprint }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if let fingerprint = try container.decodeIfPresent(String.self, forKey: .fingerprint) {
            self = .secret(fingerprint: fingerprint)
        } else if let text = try container.decodeIfPresent(String.self, forKey: .value) {
            self = .value(text)
        } else {
            self = .absent
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .absent: try container.encode(true, forKey: .absent)
        case .value(let text): try container.encode(text, forKey: .value)
        case .secret(let fingerprint):
            try container.encode(true, forKey: .protected)
            try container.encode(fingerprint, forKey: .fingerprint)
        }
    }

    /// `(absent)`, the value quoted, or `(protected #fingerprint)`.
    public var description: String {
        switch self {
        case .absent: "(absent)"
        case .value(let text): "\"\(text)\""
        case .secret(let fingerprint): "(protected #\(fingerprint))"
        }
    }
}

/// Turns a protected value into the fingerprint an explanation shows: keyed by a salt that lives only
/// as long as one merge, so fingerprints compare within an explanation and reveal nothing outside it.
public struct SecretFingerprint: Sendable {
    private let digest: @Sendable (String) -> String

    /// `digest` maps a secret to a short keyed digest (MyPassSync uses HMAC-SHA-256 with a random key).
    public init(_ digest: @escaping @Sendable (String) -> String) {
        self.digest = digest
    }

    /// The state of a field value: plain text as is, a protected value as its fingerprint.
    public func state(_ value: FieldValue?) -> FieldState {
        switch value {
        case nil: .absent
        case .plain(let text)?: .value(text)
        case .protected(let secret)?: .secret(fingerprint: digest(secret.reveal()))
        }
    }
}

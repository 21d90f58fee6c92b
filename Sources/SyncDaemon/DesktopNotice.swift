public import Foundation
public import SyncWatch
public import SyncCommit
public import MyPassCore

/// One desktop notice: what it says about which vault, how urgent it is, and the decisions it
/// offers as buttons (where the notification server shows actions). Names and counts only, never a
/// value of the vault.
public struct DesktopNotice: Sendable, Equatable {
    /// How urgent a notice is (the server may show a critical one until it is dismissed).
    public enum Urgency: Sendable, Equatable { case normal, critical }

    /// The vault's path.
    public let vault: String
    public let summary: String
    public let body: String
    public let urgency: Urgency
    /// The decisions offered (a vault under the `ask` policy), answered like `daemon decide`.
    public let actions: [SyncSession.Decision]
    /// A shared group's reference offered for approval (an Approve button), nil for other notices.
    public var approval: ShareApprovalRequest?

    /// The longest summary a notice carries (characters).
    public static let maximumSummaryLength = 160
    /// The longest body a notice carries (characters): a server spends time on every byte it lays out.
    public static let maximumBodyLength = 1_000

    /// A notice about `vault`; `summary` and `body` are made inert (`InertText`: no line break,
    /// control or bidirectional override of a name reaches the server raw) and cut to their maximum.
    public init(vault: String, summary: String, body: String, urgency: Urgency, actions: [SyncSession.Decision]) {
        self.init(vault: vault, summary: summary, bodyLines: [body], urgency: urgency, actions: actions)
    }

    /// A notice whose body is `bodyLines`, each made inert on its own (a line break inside one is
    /// escaped like any other control) and shown on a line of its own; the whole cut to its maximum.
    public init(vault: String, summary: String, bodyLines: [String], urgency: Urgency, actions: [SyncSession.Decision]) {
        self.vault = vault
        self.summary = InertText.escaped(summary, limit: Self.maximumSummaryLength)
        self.body = Self.bounded(bodyLines)
        self.urgency = urgency
        self.actions = actions
    }

    /// A notice offering `approval` (an Approve button).
    public init(vault: String, summary: String, body: String, approval: ShareApprovalRequest) {
        self.init(vault: vault, summary: summary, bodyLines: [body], urgency: .normal, actions: [])
        self.approval = approval
    }

    private static func bounded(_ lines: [String]) -> String {
        let joined = lines.map { InertText.escaped($0) }.joined(separator: "\n")
        guard joined.count > maximumBodyLength else { return joined }
        return String(joined.prefix(maximumBodyLength - 1)) + "…"
    }
}

/// What a notice's Approve button approves: one reference (by its approval digest) on one group.
public struct ShareApprovalRequest: Sendable, Equatable {
    /// The group's UUID and path.
    public let group: UUID
    public let groupPath: String
    /// The approval digest of the reference the notice was about.
    public let reference: String

    public init(group: UUID, groupPath: String, reference: String) {
        self.group = group
        self.groupPath = groupPath
        self.reference = reference
    }
}

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

    /// The longest summary a notice carries (characters).
    public static let maximumSummaryLength = 160
    /// The longest body a notice carries (characters): a server spends time on every byte it lays out.
    public static let maximumBodyLength = 1_000

    /// A notice about `vault`; `summary` and `body` are made inert (`InertText`: no line break,
    /// control or bidirectional override of a name reaches the server raw) and cut to their maximum.
    public init(vault: String, summary: String, body: String, urgency: Urgency, actions: [SyncSession.Decision]) {
        self.vault = vault
        self.summary = InertText.escaped(summary, limit: Self.maximumSummaryLength)
        self.body = Self.bounded(body)
        self.urgency = urgency
        self.actions = actions
    }

    /// `body` with each line made inert (the lines the planner writes are kept apart) and the whole cut.
    private static func bounded(_ body: String) -> String {
        let lines = body.split(separator: "\n", omittingEmptySubsequences: false).map { InertText.escaped(String($0)) }
        let joined = lines.joined(separator: "\n")
        guard joined.count > maximumBodyLength else { return joined }
        return String(joined.prefix(maximumBodyLength - 1)) + "…"
    }
}


public import Foundation
public import SyncWatch
public import SyncCommit
internal import MyPassCore

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
}

/// Decides which watch events become desktop notices and what they say, and coalesces merged
/// conflict copies per vault: copies merged within `quietTime` of each other (a sync engine ships
/// several at once) make one notice, sent once no copy followed for `quietTime` (or after
/// `longestWait` at the latest). A pure value: the time is passed in, the caller sends what is due.
public struct NoticePlanner: Sendable {
    /// How long after the last merged copy of a vault its notice waits for more.
    public let quietTime: TimeInterval
    /// How long a burst is collected at most.
    public let longestWait: TimeInterval
    /// The most entry paths a notice names (then "and N more").
    public static let maximumPathsNamed = 5

    private struct Burst {
        var started: Date
        var last: Date
        var copies: Int
        var changes: Int
        var paths: [String]
    }

    private var bursts: [String: Burst] = [:]

    /// A planner collecting bursts for `quietTime` seconds after their last copy, `longestWait` at most.
    public init(quietTime: TimeInterval = 2, longestWait: TimeInterval = 30) {
        self.quietTime = quietTime
        self.longestWait = longestWait
    }

    /// Takes `event` at `now`: a notice to send at once (a decision needed, a refusal, an error),
    /// or nil (nothing to say, or a merged copy collected into its vault's burst).
    public mutating func take(_ event: WatchEvent, at now: Date) -> DesktopNotice? {
        let name = (event.vault as NSString).lastPathComponent
        switch event {
        case .conflictCopyMerged(let vault, _, _, let changes, _):
            var burst = bursts[vault] ?? Burst(started: now, last: now, copies: 0, changes: 0, paths: [])
            burst.last = now
            burst.copies += 1
            burst.changes += changes.count
            for change in changes where change.subject != .meta && !burst.paths.contains(change.path) { burst.paths.append(change.path) }
            bursts[vault] = burst
            return nil
        case .decisionNeeded(let vault, _):
            return DesktopNotice(vault: vault, summary: "\(name): a decision is needed",
                                 body: "The vault changed on disk. Reload it, overwrite it with this device's version, or merge "
                                    + "(or `mypass-sync daemon decide \(vault) reload|overwrite|merge`).",
                                 urgency: .critical, actions: [.merge, .reload, .overwrite])
        case .refused(let vault, .rollback(let older), _):
            return DesktopNotice(vault: vault, summary: "\(name): an older version was refused",
                                 body: "\(Reconciler.Refusal.rollback(olderEntries: older).description). Merge puts this device's newer "
                                    + "values back into it, Reload takes it as it is (this device's version kept aside), Overwrite writes "
                                    + "this device's version over it (or `mypass-sync daemon decide \(vault) merge|reload|overwrite`).",
                                 urgency: .critical, actions: [.merge, .reload, .overwrite])
        case .refused(let vault, .otherDatabase, _):
            return DesktopNotice(vault: vault, summary: "\(name): another database was refused",
                                 body: "\(Reconciler.Refusal.otherDatabase.description). Reload takes it as the vault (this device's "
                                    + "version kept aside), Overwrite puts this device's version back "
                                    + "(or `mypass-sync daemon decide \(vault) reload|overwrite`).",
                                 urgency: .critical, actions: [.reload, .overwrite])
        case .conflictCopyLeft(let vault, let copy, let reason):
            return DesktopNotice(vault: vault, summary: "\(name): a conflict copy was not merged",
                                 body: "\((copy as NSString).lastPathComponent): \(reason.rawValue)", urgency: .critical, actions: [])
        case .keyChanged(let vault), .error(let vault, _), .unreadable(let vault, _):
            return DesktopNotice(vault: vault, summary: "\(name): \(Self.problemTitle(event.kind))", body: event.detail, urgency: .critical,
                                 actions: [])
        default:
            return nil
        }
    }

    private static func problemTitle(_ kind: WatchEvent.Kind) -> String {
        switch kind {
        case .keyChanged: "the vault no longer opens"
        case .unreadable: "the vault cannot be read"
        default: "an error"
        }
    }

    /// When the next collected notice is due, if one is collected.
    public var nextDue: Date? {
        bursts.values.map { min($0.last.addingTimeInterval(quietTime), $0.started.addingTimeInterval(longestWait)) }.min()
    }

    /// The collected notices due at `now` (taken out of the planner), by vault.
    public mutating func due(at now: Date) -> [DesktopNotice] {
        var notices: [DesktopNotice] = []
        for (vault, burst) in bursts.sorted(by: { $0.key < $1.key })
        where burst.last.addingTimeInterval(quietTime) <= now || burst.started.addingTimeInterval(longestWait) <= now {
            bursts[vault] = nil
            notices.append(Self.merged(vault: vault, burst))
        }
        return notices
    }

    /// A vault is no longer watched (removed, or the daemon stops): its burst is sent now.
    public mutating func flush(_ vault: String) -> DesktopNotice? {
        guard let burst = bursts.removeValue(forKey: vault) else { return nil }
        return Self.merged(vault: vault, burst)
    }

    private static func merged(vault: String, _ burst: Burst) -> DesktopNotice {
        let name = (vault as NSString).lastPathComponent
        let copies = burst.copies == 1 ? "a conflict copy" : "\(burst.copies) conflict copies"
        var body = "\(burst.changes) change\(burst.changes == 1 ? "" : "s")"
        if !burst.paths.isEmpty {
            let named = burst.paths.prefix(maximumPathsNamed).joined(separator: ", ")
            let more = burst.paths.count - min(burst.paths.count, maximumPathsNamed)
            body += ": " + named + (more > 0 ? " and \(more) more" : "")
        }
        return DesktopNotice(vault: vault, summary: "\(name): merged \(copies)", body: body, urgency: .normal, actions: [])
    }
}

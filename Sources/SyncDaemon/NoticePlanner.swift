public import Foundation
public import SyncWatch
public import SyncCommit
public import MyPassCore
internal import SyncFiles

/// Decides which watch events become desktop notices and what they say, and coalesces the conflict
/// copies of each vault: copies merged or left unmerged within `quietTime` of each other (a sync
/// engine ships several at once; an attacker with folder access can plant a thousand) make one
/// notice per vault, sent once no copy followed for `quietTime` (or after `longestWait` at the latest).
/// Every event is taken in time linear in its size (entry paths deduplicated through a set, at most
/// `maximumNamed` kept for the text) and every name is cut to `maximumNameLength`, so a notice stays
/// short whatever arrives (`DesktopNotice` escapes what it shows and bounds its length). A pure value: the time is passed in, the caller sends what is due.
public struct NoticePlanner: Sendable {
    /// How long after the last copy of a vault its notice waits for more.
    public let quietTime: TimeInterval
    /// How long a burst is collected at most.
    public let longestWait: TimeInterval
    /// The most entry paths, or copy names, a notice names (then "and N more").
    public static let maximumNamed = 5
    /// The longest name (an entry path, a file name) a notice shows, in characters.
    public static let maximumNameLength = 80

    /// Names collected up to `maximumNamed`, with the count of distinct ones.
    private struct NameList {
        var named: [String] = []
        var distinct = Set<String>()

        mutating func add(_ name: String) {
            guard distinct.insert(name).inserted, named.count < NoticePlanner.maximumNamed else { return }
            named.append(NoticePlanner.cut(name))
        }

        /// "a, b, c and N more".
        var text: String {
            let more = distinct.count - named.count
            return named.joined(separator: ", ") + (more > 0 ? " and \(more) more" : "")
        }
    }

    /// The copies of one vault collected since `started`.
    private struct Burst {
        var started: Date
        var last: Date
        var merged = 0
        var changes = 0
        var paths = NameList()
        var left = 0
        var leftNames = NameList()
        var leftReasons = Set<String>()
    }

    private var bursts: [String: Burst] = [:]

    /// A planner collecting bursts for `quietTime` seconds after their last copy, `longestWait` at most.
    public init(quietTime: TimeInterval = 2, longestWait: TimeInterval = 30) {
        self.quietTime = quietTime
        self.longestWait = longestWait
    }

    /// Takes `event` at `now`: a notice to send at once (a decision needed, a refusal, an error),
    /// or nil (nothing to say, or a copy collected into its vault's burst).
    public mutating func take(_ event: WatchEvent, at now: Date) -> DesktopNotice? {
        let name = Self.fileName(event.vault)
        switch event {
        case .conflictCopyMerged(let vault, _, _, let changes, _):
            collect(into: vault, at: now) { burst in
                burst.merged += 1
                burst.changes += changes.count
                for change in changes where change.subject != .meta { burst.paths.add(change.path) }
            }
            return nil
        case .conflictCopyLeft(let vault, let copy, let reason):
            collect(into: vault, at: now) { burst in
                burst.left += 1
                burst.leftNames.add(PathText.name(of: copy))
                burst.leftReasons.insert(reason.rawValue)
            }
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
        case .shareSynced(let vault, let group, let changes, _) where !changes.isEmpty:
            return DesktopNotice(vault: vault, summary: "\(name): shared group \(Self.cut(group))",
                                 body: "\(changes.count) change(s) imported from its container.", urgency: .normal, actions: [])
        case .shareAwaitsApproval(let vault, let group, let groupID, let reference):
            return DesktopNotice(vault: vault, summary: "\(name): shared group \(Self.cut(group)) waits for approval",
                                 body: "Its KeeShare reference came from elsewhere and reads or writes nothing on this device until "
                                    + "approved (Approve, or `mypass-sync share approve \(vault) \(group)`).",
                                 approval: ShareApprovalRequest(group: groupID, groupPath: group, reference: reference))
        case .shareIdle(let vault, let group, let reason) where reason.hasPrefix("import failed") || reason.hasPrefix("export failed"):
            return DesktopNotice(vault: vault, summary: "\(name): shared group \(Self.cut(group))", body: reason, urgency: .critical, actions: [])
        case .copiesWaiting(let vault, let copies, _):
            return DesktopNotice(vault: vault, summary: "\(name): \(copies.count == 1 ? "a conflict copy waits" : "\(copies.count) conflict copies wait")",
                                 body: event.detail, urgency: .normal, actions: [])
        case .keyChanged(let vault), .error(let vault, _), .unreadable(let vault, _):
            return DesktopNotice(vault: vault, summary: "\(name): \(Self.problemTitle(event.kind))", body: event.detail, urgency: .critical,
                                 actions: [])
        default:
            return nil
        }
    }

    private mutating func collect(into vault: String, at now: Date, _ update: (inout Burst) -> Void) {
        var burst = bursts.removeValue(forKey: vault) ?? Burst(started: now, last: now)
        burst.last = now
        update(&burst)
        bursts[vault] = burst
    }

    private static func problemTitle(_ kind: WatchEvent.Kind) -> String {
        switch kind {
        case .keyChanged: "the vault no longer opens"
        case .unreadable: "the vault cannot be read"
        default: "an error"
        }
    }

    /// A vault's file name, cut for a summary.
    private static func fileName(_ path: String) -> String {
        cut(PathText.name(of: path))
    }

    /// `name` cut to `maximumNameLength` characters (an ellipsis marks a cut); `DesktopNotice` makes it inert.
    static func cut(_ name: String) -> String {
        name.count > maximumNameLength ? String(name.prefix(maximumNameLength - 1)) + "…" : name
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
            notices.append(Self.notice(vault: vault, burst))
        }
        return notices
    }

    /// A vault is no longer watched (removed, or the daemon stops): its burst is sent now.
    public mutating func flush(_ vault: String) -> DesktopNotice? {
        guard let burst = bursts.removeValue(forKey: vault) else { return nil }
        return Self.notice(vault: vault, burst)
    }

    private static func notice(vault: String, _ burst: Burst) -> DesktopNotice {
        let copies = { (count: Int) in count == 1 ? "a conflict copy" : "\(count) conflict copies" }
        var summary: [String] = []
        var body: [String] = []
        if burst.merged > 0 {
            summary.append("merged \(copies(burst.merged))")
            var line = "\(burst.changes) change\(burst.changes == 1 ? "" : "s")"
            if !burst.paths.named.isEmpty { line += ": " + burst.paths.text }
            body.append(line)
        }
        if burst.left > 0 {
            summary.append(burst.merged > 0 ? "\(burst.left) not merged"
                           : burst.left == 1 ? "a conflict copy was not merged" : "\(burst.left) conflict copies were not merged")
            body.append("Not merged (\(burst.leftReasons.sorted().joined(separator: ", "))): " + burst.leftNames.text)
        }
        return DesktopNotice(vault: vault, summary: "\(fileName(vault)): " + summary.joined(separator: ", "), bodyLines: body,
                             urgency: burst.left > 0 ? .critical : .normal, actions: [])
    }
}

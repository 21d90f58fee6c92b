internal import Foundation
internal import MyPassCore
internal import MyPassSync

/// The human text of the reports the library returns.
enum ReportText {
    /// One change as a line of text.
    static func line(_ change: Change) -> String {
        let verb: String = switch change.kind {
        case .added: "+ added"
        case .updated: "~ updated"
        case .moved: "> moved"
        case .deleted: "- deleted"
        case .restored: "+ restored"
        case .conflict: "! conflict"
        case .historyMerged: "  history"
        case .historyTrimmed: "  history trimmed"
        case .metaChanged: "~ settings"
        case .recycleBinMerged: "~ recycle bin"
        }
        var text = "\(verb) \(change.subject.rawValue) \(change.path.terminalSafe)"
        if !change.fields.isEmpty { text += ": " + change.fields.joined(separator: ", ").terminalSafe }
        if !change.detail.isEmpty { text += " (\(change.detail.terminalSafe))" }
        return text
    }

    /// What a merge changes in the local vault.
    static func merge(_ report: MergeReport, local: String, explained: Bool = false) -> String {
        var lines: [String] = []
        for section in report.sections {
            if section.changes.isEmpty {
                lines.append("\(section.remote.terminalSafe): nothing to merge")
            } else {
                lines.append("\(section.remote.terminalSafe): \(section.changes.count) change(s) to \(local.terminalSafe)")
                lines += section.changes.map { "  " + line($0) }
            }
            if explained {
                lines.append("  explanation (\(section.explanation.count) decision(s)):")
                lines += section.explanation.map { "    " + decision($0) }
            }
            lines += section.warnings.map { "  warning: \($0.terminalSafe)" }
        }
        if let written = report.written {
            lines.append("wrote \(written.terminalSafe)")
        } else if report.dryRun {
            lines.append("dry run: nothing written")
        } else {
            lines.append("unchanged: \(local.terminalSafe) already holds the merged content; not written")
        }
        return lines.joined(separator: "\n")
    }

    /// One decision of an explanation: object and property, the three states, the side taken and the rule.
    static func decision(_ decision: FieldDecision) -> String {
        let times = decision.localTime.map { local in " (local \(local), remote \(decision.remoteTime.map(\.iso8601) ?? "-"))" } ?? ""
        let base = switch (decision.ancestor, decision.base) {
        case (_, nil), (.none, _): "no ancestor"
        case (.base, let state?): "base \(state)"
        case (.inferredFromHistory, let state?): "ancestor (from history) \(state)"
        }
        return "\(decision.path) \(decision.field): \(base), local \(decision.local), remote \(decision.remote)"
            .terminalSafe + " -> \(decision.result.rawValue) by \(decision.rule.rawValue)\(times)"
    }

    /// A watch event as one line of text (its changes on the lines below).
    static func event(_ event: WatchEvent, at time: Date) -> String {
        var text = "\(ISO8601DateFormatter().string(from: time)) \(event.kind.rawValue) \(event.vault.terminalSafe)"
            + (event.detail.isEmpty ? "" : ": \(event.detail.terminalSafe)")
        for change in event.changes { text += "\n  " + line(change) }
        return text
    }
}

internal import Foundation
internal import MyPassCore
internal import MyPassSync

/// The text and JSON of `share ls` and `share sync` (never a container password).
enum ShareReport {
    /// `share ls --json`: one document.
    private struct Listing: Encodable {
        let schema = 1
        let shares: [Item]
    }

    private struct Item: Encodable {
        let group: String
        let path: String
        let type: String?
        let container: String?
        let approved: Bool
        let problem: String?
        let lastImport: String?
        let lastExport: String?
    }

    /// `share sync --json`: one document.
    private struct Pass: Encodable {
        let schema = 1
        let dryRun: Bool
        let wroteVault: Bool
        let shares: [Outcome]
    }

    private struct Outcome: Encodable {
        let group: String
        let path: String
        let imported: [Change]
        let explanation: [FieldDecision]
        let exported: Bool
        let skipped: String?
    }

    private static func time(_ date: Date?) -> String? {
        date.map { ISO8601DateFormatter().string(from: $0) }
    }

    static func list(_ shares: [ShareSync.Share], json: Bool, output: inout StandardStreams) {
        let items = shares.map { share in
            Item(group: share.group.uuidString.lowercased(), path: share.groupPath, type: share.reference?.mode.rawValue,
                 container: share.reference?.containerPath, approved: share.approved, problem: share.problem,
                 lastImport: time(share.record.lastImport), lastExport: time(share.record.lastExport))
        }
        if json {
            output.print((try? JSONText.encode(Listing(shares: items))) ?? "{}")
            return
        }
        if items.isEmpty { output.print("no shared groups") }
        for item in items {
            output.print("\(item.path.terminalSafe): \(item.type ?? "unreadable") \((item.container ?? "?").terminalSafe)"
                         + (item.approved ? "" : " (not approved on this device: `mypass-sync share approve`)"))
            if let problem = item.problem { output.print("  problem: \(problem.terminalSafe)") }
            output.print("  last import: \(item.lastImport ?? "never"), last export: \(item.lastExport ?? "never")")
        }
    }

    static func sync(_ pass: SyncSession.SharePass, json: Bool, explain: Bool, dryRun: Bool, output: inout StandardStreams) {
        if json {
            let outcomes = pass.outcomes.map {
                Outcome(group: $0.group.uuidString.lowercased(), path: $0.groupPath, imported: $0.imported, explanation: $0.decisions,
                        exported: $0.exported, skipped: $0.skipped)
            }
            output.print((try? JSONText.encode(Pass(dryRun: dryRun, wroteVault: pass.wroteVault, shares: outcomes))) ?? "{}")
            return
        }
        if pass.outcomes.isEmpty { output.print("no shared groups") }
        for outcome in pass.outcomes {
            var line = "\(outcome.groupPath.terminalSafe): "
            var parts: [String] = []
            if !outcome.imported.isEmpty { parts.append("imported \(outcome.imported.count) change(s)") }
            if outcome.exported { parts.append(dryRun ? "would write the container" : "wrote the container") }
            if let skipped = outcome.skipped { parts.append(skipped) }
            line += parts.isEmpty ? "in step" : parts.joined(separator: "; ")
            output.print(line)
            for change in outcome.imported { output.print("  " + ReportText.line(change)) }
            if explain { for decision in outcome.decisions { output.print("    " + ReportText.decision(decision)) } }
        }
        if dryRun { output.print("dry run: nothing written") }
    }
}

internal import Foundation
internal import MyPassSync
internal import MyPassCore

/// `mypass-sync match VAULT SERVICE [--json] [--reveal]`: the entries AutoFill would suggest.
struct MatchCommand: Command {
    let name = "match"
    let summary = "List the entries AutoFill would suggest for a URL, domain or app (androidapp://ID)."
    let usage = "mypass-sync match <vault> <url|domain|androidapp://id> [--json] [--reveal] [credentials]"
    let json = Flag("--json", help: "Print one JSON document (schema 1).")
    let reveal = Flag("--reveal", help: "Include the passwords.")
    let credentials = CredentialOptions()

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        let parsed = try parse(arguments, count: 2...2)
        let vault = try credentials.unlockForReading(parsed, path: parsed.positionals[0], state: nil, command: name).vault
        let result = CredentialMatcher.filter(entries: vault.autoFillCandidates, for: [ServiceIdentifier(parsing: parsed.positionals[1])])
        let revealed = parsed[reveal]
        let matches = result.suggested.map { entry in
            Match(path: vault.path(ofEntry: entry.uuid)?.description ?? "/" + entry.title, username: entry.text(EntryField.userName), url: entry.text(EntryField.url),
                  password: revealed ? entry.text(EntryField.password) : nil)
        }
        if parsed[json] {
            output.print(try JSONText.encode(MatchReport(suggested: matches, all: result.all.count)))
        } else if matches.isEmpty {
            output.print("no entry for \(parsed.positionals[1].terminalSafe) (\(result.all.count) entries in all)")
        } else {
            for match in matches {
                output.print([match.path, match.username, match.url, match.password].compactMap { $0 }.filter { !$0.isEmpty }
                    .map(\.terminalSafe).joined(separator: "  "))
            }
        }
        return .success
    }
}

private struct Match: Encodable {
    let path: String
    let username: String
    let url: String
    let password: String?
}

private struct MatchReport: Encodable {
    let schema = 1
    let suggested: [Match]
    let all: Int
    /// The Public Suffix List that decided which hosts are one site, and its date.
    let publicSuffixList = PublicSuffixList.source
}

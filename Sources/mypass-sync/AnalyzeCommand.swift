internal import Foundation
internal import MyPassCore
internal import MyPassSync

/// `mypass-sync analyze VAULT --hibp FILE [--json] [--exit-code]`.
struct AnalyzeCommand: Command {
    let name = "analyze"
    let summary = "Find entries whose password is in an offline Have I Been Pwned list."
    let usage = "mypass-sync analyze <vault> --hibp <file> [--json] [--exit-code] [credentials]"
    let notes = """
        The list is HIBP's SHA-1 download "ordered by hash" (SHA1HEX:COUNT lines). It is searched by binary \
        search with small reads, never loaded: a 40 GB list needs no memory to speak of. Entries in the recycle \
        bin, empty passwords and entries excluded from reports (KeePassXC's setting) are not checked.
        """
    let hibp = Option<String>("--hibp", "-H", valueName: "file", help: "The HIBP SHA-1 list, sorted by hash.")
    let json = Flag("--json", help: "Print {\"checked\", \"leaked\": [{\"path\", \"uuid\", \"timesLeaked\"}]}.")
    let exitCode = Flag("--exit-code", help: "Exit 1 when a password is in the list.")
    let credentials = CredentialOptions()
    let stateOptions = StateOptions()

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        let parsed = try parse(arguments, count: 1...1)
        guard let listPath = parsed[hibp] else { throw CommandLineError.usage(message: "--hibp FILE is required", command: name) }
        let list = try LeakedPasswordList(path: listPath)  // before the password: a wrong list path costs no unlock
        let vault = try credentials.unlockForReading(parsed, path: parsed.positionals[0], state: stateOptions.state(parsed),
                                                             command: name).vault
        let leaked = try PasswordAudit.leakedEntries(of: vault, in: list)
        let checked = vault.activeEntries().count
        if parsed[json] {
            output.print(try JSONText.encode(AnalyzeOutput(checked: checked, leaked: leaked.map {
                .init(path: $0.path.description, uuid: $0.uuid.canonicalString, timesLeaked: $0.timesLeaked)
            })))
        } else {
            for entry in leaked {
                // keepassxc-cli's line (its paths have no leading slash), so that scripts carry over.
                output.print("Password for '\(String(entry.path.description.dropFirst()).terminalSafe)' has been leaked \(entry.timesLeaked) time\(entry.timesLeaked == 1 ? "" : "s")!")
            }
            output.printError("\(checked) entries checked, \(leaked.count) with a leaked password")
        }
        return parsed[exitCode] && !leaked.isEmpty ? .differences : .success
    }
}

private struct AnalyzeOutput: Encodable {
    struct Leaked: Encodable {
        let path: String
        let uuid: String
        let timesLeaked: Int
    }
    let schema = 1
    let checked: Int
    let leaked: [Leaked]
}

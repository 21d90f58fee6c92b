internal import Foundation
internal import KDBXFormat
internal import MyPassCore
internal import MyPassMerge

/// `mypass-sync diff A B [--base FILE] [--json] [--exit-code]`.
struct DiffCommand: Command {
    let name = "diff"
    let summary = "Show what differs between two vaults, per object and field (names, never values)."
    let usage = "mypass-sync diff <a> <b> [--base <file>] [--json] [--exit-code] [credentials]"
    let options: [OptionSpec] = [
        .value("--base", valueName: "file", help: "The common version: fields changed on both sides are shown as conflicts."),
        .flag("--json", help: "Print one JSON document (schema 1) instead of text."),
        .flag("--exit-code", help: "Exit 1 when the vaults differ."),
    ] + Credentials.options + Credentials.remoteOptions
    var details: String {
        "ARGUMENTS:\n  <a> <b>                 The vaults to compare (changes that turn <a> into <b>).\n\n" + options.helpSection
    }

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        let parsed = try ParsedArguments.parse(arguments, options: options, command: name)
        guard parsed.positionals.count == 2 else {
            throw CommandLineError.usage(message: "diff takes exactly two vaults", command: name)
        }
        let first = try Credentials.openVault(parsed, path: parsed.positionals[0], command: name)
        let secondKey = try Credentials.remoteKey(parsed, localKey: first.key, vaultPath: parsed.positionals[1], command: name)
        let second = try Credentials.openOther(path: parsed.positionals[1], key: secondKey, cachedKey: first.opened.derivedKey, limits: first.limits)
        let base = try parsed.value("base").map { path in
            try Credentials.openOther(path: path, key: first.key, cachedKey: first.opened.derivedKey, limits: first.limits).vault
        }
        let changes = VaultDiff.diff(from: first.opened.vault, to: second.vault, base: base)
        if parsed.flag("json") {
            output.print(try JSONText.encode(DiffReport(changes: changes)))
        } else if changes.isEmpty {
            output.print("no differences")
        } else {
            output.print(changes.map(ChangeText.line).joined(separator: "\n"))
        }
        return parsed.flag("exit-code") && !changes.isEmpty ? .differences : .success
    }
}

/// What `diff --json` prints.
struct DiffReport: Encodable {
    let schema = 1
    let changes: [Change]
}

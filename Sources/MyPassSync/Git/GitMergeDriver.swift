public import Foundation
public import SyncCommit
internal import SyncState
internal import SyncFiles

/// The vault as git's merge driver (`mypass-sync git merge-driver %O %A %B %P`): a three-way merge
/// of git's current version (`%A`) and the other branch's (`%B`) against their common ancestor
/// (`%O`), the result written into `%A` only once the merge succeeded (git keeps whatever `%A`
/// holds when a driver fails, and marks the conflict). Git's temporary files are not journaled in
/// this device's sync state.
public enum GitMergeDriver {
    /// Merges `other` into `current` against `ancestor` (an empty file: the branches share none,
    /// each entry's ancestor is then inferred from history), writing the result over `current`.
    public static func merge(ancestor: String, current: String, other: String, credentials: VaultCredentials) throws -> MergeReport {
        let file = try VaultFile.read(current)
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("mypass-sync-git-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(at: scratch) }
        var request = MergeJob.Request(copies: [other], state: SyncStateStore(directory: scratch.path))
        let hasAncestor = (SystemCalls.status(atPath: ancestor)?.size ?? 0) > 0
        request.basePath = hasAncestor ? ancestor : nil
        request.outputPath = current
        return try MergeJob.run(request, on: file, credentials: credentials)
    }
}

/// `mypass-sync git install`: the `.gitattributes` line and the merge driver and textconv settings,
/// with the credential options given (never a password).
public enum GitSetup {
    /// The attributes line that sends `.kdbx` files to the driver and the textconv.
    public static let attributesLine = "*.kdbx merge=mypass-sync diff=mypass-sync"

    /// What was written where.
    public struct Report: Sendable {
        public let attributesFile: String
        public let configScope: String
        public let driver: String
        public let textconv: String
    }

    /// Why git could not be set up.
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// Writes the settings for the repository at `repository` (any folder inside it), or for the user
    /// (`global`), with `program` as the executable and `credentialArguments` after each command.
    public static func install(repository: String?, global: Bool, program: String, credentialArguments: [String]) throws -> Report {
        let options = credentialArguments.map(shellQuoted).joined(separator: " ")
        let driver = ([shellQuoted(program), "git", "merge-driver", "%O", "%A", "%B", "%P"] + (options.isEmpty ? [] : [options])).joined(separator: " ")
        let textconv = ([shellQuoted(program), "git", "textconv"] + (options.isEmpty ? [] : [options])).joined(separator: " ")
        let attributes: String
        let config: [String]
        if global {
            config = ["config", "--global"]
            let base = ProcessInfo.processInfo.environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 }
                ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".config").path
            try FileManager.default.createDirectory(atPath: base + "/git", withIntermediateDirectories: true)
            attributes = base + "/git/attributes"
        } else {
            let folder = repository ?? FileManager.default.currentDirectoryPath
            let top = try git(["-C", folder, "rev-parse", "--show-toplevel"]).trimmingCharacters(in: .whitespacesAndNewlines)
            config = ["-C", top, "config", "--local"]
            attributes = top + "/.gitattributes"
        }
        let existing = (try? String(contentsOfFile: attributes, encoding: .utf8)) ?? ""
        if !existing.split(separator: "\n").contains(where: { $0.trimmingCharacters(in: .whitespaces) == attributesLine }) {
            let text = existing + (existing.isEmpty || existing.hasSuffix("\n") ? "" : "\n") + attributesLine + "\n"
            try AtomicFileWriter.write(Data(text.utf8), toPath: attributes)
            chmod(attributes, 0o644)
        }
        _ = try git(config + ["merge.mypass-sync.name", "mypass-sync: field-level three-way merge of KeePass vaults"])
        _ = try git(config + ["merge.mypass-sync.driver", driver])
        _ = try git(config + ["diff.mypass-sync.textconv", textconv])
        return Report(attributesFile: attributes, configScope: global ? "global" : "repository", driver: driver, textconv: textconv)
    }

    /// `word` as one shell word.
    static func shellQuoted(_ word: String) -> String {
        word.allSatisfy { $0.isLetter || $0.isNumber || "-_./=:@%+,".contains($0) } && !word.isEmpty
            ? word : "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    private static func git(_ arguments: [String]) throws -> String {
        let (status, output) = try ChildProcess.run("/usr/bin/env", ["git"] + arguments, environment: ProcessInfo.processInfo.environment,
                                                    input: nil, readingOutput: true, passingErrors: true)
        guard status == 0 else { throw Failure(description: "git \(arguments.joined(separator: " ")) failed (exit status \(status))") }
        return String(decoding: output, as: UTF8.self)
    }
}

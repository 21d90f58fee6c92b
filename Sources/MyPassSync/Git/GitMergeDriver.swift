public import Foundation
public import SyncCommit
internal import SyncState
public import SyncFiles

/// The vault as git's merge driver (`mypass-sync git merge-driver [options] -- %O %A %B %P`): a three-way merge
/// of git's current version (`%A`) and the other branch's (`%B`) against their common ancestor
/// (`%O`), the result written into `%A` only once the merge succeeded (git keeps whatever `%A`
/// holds when a driver fails, and marks the conflict). Git's temporary files are not journaled in
/// this device's sync state.
public enum GitMergeDriver {
    /// Merges `other` into `current` against `ancestor` (an empty file: the branches share none,
    /// each entry's ancestor is then inferred from history), writing the result over `current`; all
    /// three on `fileSystem`.
    public static func merge(
        ancestor: String, current: String, other: String, on fileSystem: FileSystem, credentials: VaultCredentials
    ) throws -> MergeReport {
        let file = try VaultFile.read(current, on: fileSystem)
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("mypass-sync-git-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(at: scratch) }
        var request = FileMerge.Request(copies: [other], state: SyncStateStore(directory: scratch.path, on: file.fileSystem))
        let hasAncestor = (SystemCalls.status(atPath: ancestor, on: file.fileSystem)?.size ?? 0) > 0
        request.basePath = hasAncestor ? ancestor : nil
        request.outputPath = current
        return try FileMerge.run(request, on: file, credentials: credentials)
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
    /// Everything git fills in (`%O %A %B %P`, textconv's file) follows `--`, so a file name a branch
    /// chose is never read as an option, and every `%` of ours is written `%%`, so git expands none
    /// of it. A `.gitattributes` or git settings file that is a symlink or not a regular file is
    /// refused: a cloned repository may link it to a private file that the write would copy in.
    public static func install(repository: String?, global: Bool, program: String, credentialArguments: [String]) throws -> Report {
        let commands = commandLines(program: program, credentialArguments: credentialArguments)
        let attributes: String
        let config: [String]
        let settingsFiles: [String]
        if global {
            config = ["config", "--global"]
            let home = FileManager.default.homeDirectoryForCurrentUser.path
            let base = ProcessInfo.processInfo.environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? home + "/.config"
            try FileManager.default.createDirectory(atPath: base + "/git", withIntermediateDirectories: true)
            attributes = base + "/git/attributes"
            settingsFiles = [home + "/.gitconfig", base + "/git/config"]
        } else {
            let folder = repository ?? FileManager.default.currentDirectoryPath
            let top = try git(["-C", folder, "rev-parse", "--show-toplevel"]).trimmingCharacters(in: .whitespacesAndNewlines)
            let gitDirectory = try git(["-C", top, "rev-parse", "--absolute-git-dir"]).trimmingCharacters(in: .whitespacesAndNewlines)
            config = ["-C", top, "config", "--local"]
            attributes = top + "/.gitattributes"
            settingsFiles = [gitDirectory + "/config"]
        }
        for file in [attributes] + settingsFiles { try refuseUnlessRegularOrAbsent(file) }
        let existing = try existingText(of: attributes)
        if !existing.split(separator: "\n").contains(where: { $0.trimmingCharacters(in: .whitespaces) == attributesLine }) {
            let text = existing + (existing.isEmpty || existing.hasSuffix("\n") ? "" : "\n") + attributesLine + "\n"
            try AtomicFileWriter.write(Data(text.utf8), toPath: attributes, on: .real)
            chmod(attributes, 0o644)
        }
        _ = try git(config + ["merge.mypass-sync.name", "mypass-sync: field-level three-way merge of KeePass vaults"])
        _ = try git(config + ["merge.mypass-sync.driver", commands.driver])
        _ = try git(config + ["diff.mypass-sync.textconv", commands.textconv])
        return Report(attributesFile: attributes, configScope: global ? "global" : "repository", driver: commands.driver,
                      textconv: commands.textconv)
    }

    /// The merge driver's and the textconv's command lines: the credential options, `--`, then what git
    /// fills in. In the driver (which git expands) a `%` of ours is `%%`; the textconv is not expanded.
    static func commandLines(program: String, credentialArguments: [String]) -> (driver: String, textconv: String) {
        let options = credentialArguments.map(shellQuoted)
        let escapedForGit = options.map { $0.replacingOccurrences(of: "%", with: "%%") }
        let driver = ([shellQuoted(program).replacingOccurrences(of: "%", with: "%%"), "git", "merge-driver"] + escapedForGit
                      + ["--", "%O", "%A", "%B", "%P"]).joined(separator: " ")
        let textconv = ([shellQuoted(program), "git", "textconv"] + options + ["--"]).joined(separator: " ")
        return (driver, textconv)
    }

    /// Throws unless `path` is absent or a regular file (not a symlink, not a folder, not a device).
    private static func refuseUnlessRegularOrAbsent(_ path: String) throws {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            guard errno == ENOENT else { throw Failure(description: "\(path): cannot be examined (\(String(cString: strerror(errno))))") }
            return
        }
        let type = info.st_mode & S_IFMT
        guard type == S_IFREG else {
            let what = type == S_IFLNK ? "a symbolic link" : "not a regular file"
            throw Failure(description: "\(path) is \(what): not written (a link could make git publish the file it points to); "
                          + "replace it with a regular file first")
        }
    }

    /// The text of the regular file at `path` (never through a symlink), or "" when there is none.
    private static func existingText(of path: String) throws -> String {
        do {
            return String(decoding: try FileReading.readAll(atPath: path, on: .real, followSymlinks: false, limit: 1 << 20), as: UTF8.self)
        } catch FileError.notFound {
            return ""
        } catch {
            throw Failure(description: "\(path): \(error)")
        }
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

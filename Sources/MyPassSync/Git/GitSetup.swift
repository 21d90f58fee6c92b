public import Foundation
public import SyncCommit
internal import SyncFiles

/// `mypass-sync git install`: the `.gitattributes` line and the merge driver and textconv settings,
/// with the credential options given (never a password).
public enum GitSetup {
    /// The attributes line that sends `.kdbx` files to the driver and the textconv.
    public static let attributesLine = "*.kdbx merge=mypass-sync diff=mypass-sync"

    /// What was written where.
    public struct Report: Sendable {
        public let attributesFile: String
        public let configScope: String
        /// The git settings file written.
        public let configFile: String
        public let driver: String
        public let textconv: String
    }

    /// Why git could not be set up: a file refused for safety, or git failing.
    public struct Failure: Error, CustomStringConvertible, Sendable, ClassifiedFailure {
        public let description: String
        public let failureKind: FailureKind
    }

    /// Writes the settings for the repository at `repository` (any folder inside it, a linked
    /// worktree's included), or for the user (`global`), with `program` as the executable and
    /// `credentialArguments` after each command. Everything git fills in (`%O %A %B %P`, textconv's
    /// file) follows `--`, so a file name a branch chose is never read as an option, and every `%` of
    /// ours is written `%%`, so git expands none of it. The settings file is the one git itself
    /// would write (`GitConfigFile`), examined and then written by name; a `.gitattributes` or
    /// settings file that is a symlink or not a regular file is refused: a cloned repository may
    /// link it to a private file that the write would copy in.
    public static func install(repository: String?, global: Bool, program: String, credentialArguments: [String]) throws -> Report {
        let commands = commandLines(program: program, credentialArguments: credentialArguments)
        let environment = ProcessInfo.processInfo.environment
        let attributes: String
        let settings: String
        if global {
            let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? FileManager.default.homeDirectoryForCurrentUser.path
            let base = environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? home + "/.config"
            try FileManager.default.createDirectory(atPath: base + "/git", withIntermediateDirectories: true)
            attributes = base + "/git/attributes"
            settings = GitConfigFile.global(environment: environment, home: home, configHome: base)
        } else {
            let folder = repository ?? FileManager.default.currentDirectoryPath
            let top = try git(["-C", folder, "rev-parse", "--show-toplevel"]).trimmingCharacters(in: .whitespacesAndNewlines)
            let commonDirectory = try git(["-C", top, "rev-parse", "--path-format=absolute", "--git-common-dir"])
                .trimmingCharacters(in: .whitespacesAndNewlines)
            attributes = top + "/.gitattributes"
            settings = GitConfigFile.repository(commonDirectory: commonDirectory)
        }
        for file in [attributes, settings] { try refuseUnlessRegularOrAbsent(file) }
        let existing = try existingText(of: attributes)
        if !existing.split(separator: "\n").contains(where: { $0.trimmingCharacters(in: .whitespaces) == attributesLine }) {
            let text = existing + (existing.isEmpty || existing.hasSuffix("\n") ? "" : "\n") + attributesLine + "\n"
            try AtomicFileWriter.write(Data(text.utf8), toPath: attributes, on: .real)
            chmod(attributes, 0o644)
        }
        let config = ["config", "--file", settings]
        _ = try git(config + ["merge.mypass-sync.name", "mypass-sync: field-level three-way merge of KeePass vaults"])
        _ = try git(config + ["merge.mypass-sync.driver", commands.driver])
        _ = try git(config + ["diff.mypass-sync.textconv", commands.textconv])
        return Report(attributesFile: attributes, configScope: global ? "global" : "repository", configFile: settings,
                      driver: commands.driver, textconv: commands.textconv)
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
            guard errno == ENOENT else {
                throw Failure(description: "\(path): cannot be examined (\(String(cString: strerror(errno))))", failureKind: .ioError)
            }
            return
        }
        let type = info.st_mode & S_IFMT
        guard type == S_IFREG else {
            let what = type == S_IFLNK ? "a symbolic link" : "not a regular file"
            throw Failure(description: "\(path) is \(what): not written (a link could make git publish the file it points to); "
                          + "replace it with a regular file first", failureKind: .refusedForSafety)
        }
    }

    /// The text of the regular file at `path` (never through a symlink), or "" when there is none.
    private static func existingText(of path: String) throws -> String {
        do {
            return String(decoding: try FileReading.readAll(atPath: path, on: .real, followSymlinks: false, limit: 1 << 20), as: UTF8.self)
        } catch FileError.notFound {
            return ""
        } catch {
            throw Failure(description: "\(path): \(error)", failureKind: FailureKind(of: error))
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
        guard status == 0 else {
            throw Failure(description: "git \(arguments.joined(separator: " ")) failed (exit status \(status))", failureKind: .ioError)
        }
        return String(decoding: output, as: UTF8.self)
    }
}

public import Foundation
public import SyncWatch
public import SyncFiles
public import SyncState
#if canImport(Glibc)
internal import Glibc
#endif

/// One vault the daemon keeps in step: where it is, how its credentials are obtained (a reference,
/// never a password) and the watcher's settings for it.
public struct DaemonVault: Sendable, Equatable {
    /// The vault's absolute path.
    public var path: String
    /// Where its credentials come from.
    public var credentials: CredentialReference
    /// On an external change: merge (default), reload or ask.
    public var policy: VaultWatcher.Policy = .merge
    /// Sync-conflict copies: merge (default), report, ignore.
    public var copyPolicy: VaultWatcher.CopyPolicy = .merge
    /// Also compare fingerprints this often (network file systems); nil: on file events only.
    public var pollInterval: TimeInterval?
    /// How long a copy made on another device is left to that device.
    public var copyGrace: TimeInterval = 0
    /// How long another device is left to rebuild a vault its sync engine renamed aside.
    public var rebuildGrace: TimeInterval = 3600
    /// Whether desktop notices are sent for this vault.
    public var notices = true

    /// A vault at `path` opened through `credentials`, with the watcher's defaults.
    public init(path: String, credentials: CredentialReference) {
        self.path = path
        self.credentials = credentials
    }

    /// The watch engine's settings for this vault, with this device's settings and the daemon's clock.
    public func engineSettings(device: DeviceSettings, clock: any WatchClock) -> WatchEngine.Settings {
        var settings = WatchEngine.Settings(device: device)
        settings.clock = clock
        settings.policy = policy
        settings.copyPolicy = copyPolicy
        settings.pollInterval = pollInterval
        settings.copyGrace = copyGrace
        settings.rebuildGrace = rebuildGrace
        return settings
    }
}

/// The daemon's configuration file (`daemon.conf`): one `[vault PATH]` section per vault, then
/// `key = value` lines. Meant to be read and edited by a person; `daemon add` and `daemon remove`
/// write it. A line that cannot be used is reported with its number and skipped; the rest is used.
public struct DaemonConfiguration: Sendable, Equatable {
    /// The vaults, in file order.
    public var vaults: [DaemonVault] = []
    /// The lines that could not be used.
    public var problems: [Problem] = []

    /// A line of the file that was skipped, and why.
    public struct Problem: Sendable, Equatable, CustomStringConvertible {
        public let line: Int
        public let message: String
        public var description: String { "line \(line): \(message)" }
    }

    /// The longest line read (a longer one is a problem, not a value).
    static let maximumLineLength = 4096
    /// The largest file read.
    static let maximumFileSize: Int64 = 1 << 20

    /// An empty configuration.
    public init() {}

    /// The vault configured at `path` (resolved the same way as when it was added).
    public func vault(at path: String) -> DaemonVault? {
        vaults.first { $0.path == path }
    }

    /// The vault configured for the same real file as `path`, under whatever spelling (`/./`, `//`, a
    /// symlinked folder): the one whose `canonicalPath` is `path`'s.
    public func vault(sameFileAs path: String, on fileSystem: FileSystem) -> DaemonVault? {
        let wanted = DurableFile.canonicalPath(path, on: fileSystem)
        return vaults.first { $0.path == path || DurableFile.canonicalPath($0.path, on: fileSystem) == wanted }
    }

    /// Where the file is: `$XDG_CONFIG_HOME/mypass-sync/daemon.conf`, else `~/.config/mypass-sync/daemon.conf`.
    public static var defaultPath: String {
        let environment = ProcessInfo.processInfo.environment
        let base = environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? ((environment["HOME"] ?? NSHomeDirectory()) + "/.config")
        return base + "/mypass-sync/daemon.conf"
    }

    /// The configuration in `path` (read through a symlink, as a dotfile manager makes; only writing
    /// refuses one); none there is an empty one.
    public static func load(from path: String = defaultPath) throws(FileError) -> DaemonConfiguration {
        let data: Data
        do {
            data = try FileReading.readAll(atPath: path, on: .real, followSymlinks: true, limit: maximumFileSize)
        } catch .notFound {
            return DaemonConfiguration()
        }
        // Its password commands run as this user: a file another user owns or may write is refused.
        var status = stat()
        if stat(path, &status) == 0 && (status.st_uid != getuid() || status.st_mode & (S_IWGRP | S_IWOTH) != 0) {
            throw .system(operation: .read, path: path, errno: EPERM,
                          message: "it is another user's or others may write it, and its commands would run as you (chmod go-w, or chown it)")
        }
        return parse(String(decoding: data, as: UTF8.self)) { DurableFile.canonicalPath($0, on: .real) }
    }

    /// Writes the configuration to `path` durably (a temporary file, fsync, rename), 0600, its
    /// folder made 0700 if missing; a symlink at `path` is refused, never followed or replaced. What a
    /// person wrote there stays: the file is updated section by section (`text(updating:)`).
    public func save(to path: String = defaultPath) throws(FileError) {
        let folder = (path as NSString).deletingLastPathComponent
        if SystemCalls.status(atPath: folder, on: .real) == nil {
            guard (try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true,
                                                            attributes: [.posixPermissions: 0o700])) != nil else {
                throw .system(operation: .makeDirectory, path: folder, errno: EACCES, message: "cannot create the folder")
            }
        }
        var status = stat()
        if lstat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFLNK {
            throw .system(operation: .write, path: path, errno: ELOOP,
                          message: "it is a symlink, and the configuration is never written through one (edit the file it points to)")
        }
        // A value holding a line break would write a line of its own (a second command, say).
        guard !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control && $0 != "\t" && $0 != "\n" }),
              vaults.allSatisfy({ !$0.credentials.settingLines.joined().contains("\n") && !$0.path.contains("\n") }) else {
            throw .system(operation: .write, path: path, errno: EINVAL, message: "a path or command holds a line break or another control character")
        }
        let existing = try? FileReading.readAll(atPath: path, on: .real, followSymlinks: false, limit: Self.maximumFileSize)
        try AtomicFileWriter.write(Data(text(updating: existing.map { String(decoding: $0, as: UTF8.self) }).utf8), toPath: path, on: .real)
    }

    /// The file's text for these vaults, made from `original` (the file as it is): a section whose
    /// vault did not change is kept as written (comments, order, layout), one that changed is
    /// rewritten in place with its comments kept after its header, one no longer configured is
    /// dropped with its comments, a new vault is appended; comments outside sections stay. Comment
    /// lines right above a header (no blank line between) belong to that header's section. Without
    /// an original, `text`.
    public func text(updating original: String?) -> String {
        guard let original, !original.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { return text }
        let before = Self.parse(original)
        var lines = original.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        func isComment(_ line: String) -> Bool { line.trimmingCharacters(in: .whitespaces).hasPrefix("#") }
        func isBlank(_ line: String) -> Bool { line.trimmingCharacters(in: .whitespaces).isEmpty }
        let headers = lines.indices.compactMap { index in Self.sectionPath(of: lines[index]).map { (index: index, path: $0) } }
        // Each section: from the comments right above its header to those right above the next.
        var starts = headers.map(\.index)
        for number in starts.indices {
            let floor = number == 0 ? 0 : headers[number - 1].index + 1
            while starts[number] > floor && isComment(lines[starts[number] - 1]) { starts[number] -= 1 }
        }
        // Last to first, so that the earlier indices stay valid.
        for number in headers.indices.reversed() {
            let header = headers[number]
            let range = starts[number]..<(number + 1 < headers.count ? starts[number + 1] : lines.count)
            guard let vault = vault(at: header.path) else {
                lines.removeSubrange(range)
                // No double blank line where it was, none at the end.
                let at = range.lowerBound
                if at > 0 && isBlank(lines[at - 1]) && (at == lines.count || isBlank(lines[at])) { lines.remove(at: at - 1) }
                continue
            }
            guard before.vault(at: header.path) != vault else { continue }
            let above = lines[starts[number]..<header.index]
            let inside = lines[(header.index + 1)..<range.upperBound].filter(isComment)
            let trailing = lines[range].reversed().prefix { isBlank($0) || isComment($0) }.filter(isBlank)
            lines.replaceSubrange(range, with: Array(above) + [lines[header.index]] + inside + Self.settingLines(of: vault) + trailing)
        }
        for vault in vaults where !headers.contains(where: { $0.path == vault.path }) {
            lines += [""] + Self.sectionLines(of: vault)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The path a `[vault PATH]` header line names, or nil for any other line.
    private static func sectionPath(of line: String) -> String? {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        guard trimmed.hasPrefix("[vault "), trimmed.hasSuffix("]") else { return nil }
        return String(trimmed.dropFirst("[vault ".count).dropLast()).trimmingCharacters(in: .whitespaces)
    }

    /// The configuration as its file's text.
    public var text: String {
        var lines = ["# mypass-sync daemon: one [vault PATH] section per vault (see `mypass-sync help daemon`).",
                     "# Credentials are references (a command, the keyring, a file's path), never a password."]
        for vault in vaults {
            lines.append("")
            lines += Self.sectionLines(of: vault)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The section of `vault`: its header and its settings.
    private static func sectionLines(of vault: DaemonVault) -> [String] {
        ["[vault \(vault.path)]"] + settingLines(of: vault)
    }

    /// The `key = value` lines of `vault`.
    private static func settingLines(of vault: DaemonVault) -> [String] {
        var lines = vault.credentials.settingLines
        lines.append("policy = \(vault.policy.rawValue)")
        lines.append("conflict-copies = \(vault.copyPolicy.rawValue)")
        if let poll = vault.pollInterval { lines.append("poll = \(seconds(poll))") }
        lines.append("copy-grace = \(seconds(vault.copyGrace))")
        lines.append("rebuild-grace = \(seconds(vault.rebuildGrace))")
        lines.append("notify = \(vault.notices ? "on" : "off")")
        return lines
    }

    private static func seconds(_ value: TimeInterval) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }

    /// The configuration `text` says; each unusable line is a `Problem` and is skipped, and a
    /// section whose vault cannot be used (no credentials, a relative path, named twice) is skipped
    /// as a whole with the number of its header line. `realFile` gives the file a path names (the
    /// file system's `canonicalPath` when loading): sections naming one real file under different
    /// spellings are one vault, the first used, the later ones problems.
    public static func parse(_ text: String, realFile: (String) -> String = { $0 }) -> DaemonConfiguration {
        var configuration = DaemonConfiguration()
        var section: (line: Int, vault: DaemonVault, credentials: CredentialReference.Builder)?
        /// The header line of each vault kept, by the real file it names.
        var headerOfFile: [String: Int] = [:]
        func finish() {
            guard let current = section else { return }
            section = nil
            switch current.credentials.reference {
            case .success(let reference):
                guard configuration.vault(at: current.vault.path) == nil else {
                    configuration.problems.append(Problem(line: current.line, message: "\(current.vault.path) is configured twice; the first is used"))
                    return
                }
                let file = realFile(current.vault.path)
                if let first = headerOfFile[file] {
                    configuration.problems.append(Problem(line: current.line, message: "\(current.vault.path) names the same vault as line \(first) "
                                                          + "(\(file)); the first is used, this section is skipped"))
                    return
                }
                headerOfFile[file] = current.line
                var vault = current.vault
                vault.credentials = reference
                configuration.vaults.append(vault)
            case .failure(let failure):
                configuration.problems.append(Problem(line: current.line, message: "\(current.vault.path): \(failure); vault skipped"))
            }
        }
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let number = index + 1
            func problem(_ message: String) { configuration.problems.append(Problem(line: number, message: message)) }
            guard rawLine.utf8.count <= maximumLineLength else {
                problem("longer than \(maximumLineLength) bytes")
                continue
            }
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            guard !line.unicodeScalars.contains(where: { $0.properties.generalCategory == .control && $0 != "\t" }) else {
                problem("control characters are not allowed")
                continue
            }
            if line.hasPrefix("[") {
                finish()
                guard line.hasSuffix("]"), line.hasPrefix("[vault ") else {
                    problem("a section is `[vault /absolute/path.kdbx]`")
                    continue
                }
                let path = String(line.dropFirst("[vault ".count).dropLast()).trimmingCharacters(in: .whitespaces)
                guard path.hasPrefix("/") else {
                    problem("the vault's path must be absolute")
                    continue
                }
                section = (number, DaemonVault(path: path, credentials: CredentialReference()), CredentialReference.Builder())
                continue
            }
            guard let equals = line.firstIndex(of: "=") else {
                problem("expected `key = value`")
                continue
            }
            let key = line[..<equals].trimmingCharacters(in: .whitespaces)
            let value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            guard section != nil else {
                problem("`\(key)` outside a [vault PATH] section")
                continue
            }
            guard var current = section else { continue }
            if let message = apply(key: key, value: value, to: &current.vault, credentials: &current.credentials) { problem(message) }
            section = current
        }
        finish()
        return configuration
    }

    /// Sets one `key = value` of a vault's section; the problem's message, or nil.
    private static func apply(key: String, value: String, to vault: inout DaemonVault, credentials: inout CredentialReference.Builder) -> String? {
        func duration(_ range: ClosedRange<Double>) -> Double? {
            guard let number = Double(value), range.contains(number) else { return nil }
            return number
        }
        switch key {
        case "policy":
            guard let policy = VaultWatcher.Policy(rawValue: value) else { return "policy is merge, reload or ask, not `\(value)`" }
            vault.policy = policy
        case "conflict-copies":
            guard let policy = VaultWatcher.CopyPolicy(rawValue: value) else { return "conflict-copies is merge, report or ignore, not `\(value)`" }
            vault.copyPolicy = policy
        case "poll":
            guard let seconds = duration(0.01...86_400) else { return "poll is a number of seconds from 0.01 to 86400" }
            vault.pollInterval = seconds
        case "copy-grace":
            guard let seconds = duration(0...3600) else { return "copy-grace is a number of seconds from 0 to 3600" }
            vault.copyGrace = seconds
        case "rebuild-grace":
            guard let seconds = duration(0...(30 * 24 * 3600)) else { return "rebuild-grace is a number of seconds from 0 to 2592000" }
            vault.rebuildGrace = seconds
        case "notify":
            guard value == "on" || value == "off" else { return "notify is on or off" }
            vault.notices = value == "on"
        default:
            return credentials.set(key: key, value: value)
        }
        return nil
    }
}

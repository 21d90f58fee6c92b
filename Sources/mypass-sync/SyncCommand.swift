internal import MyPassCore
internal import MyPassSync

/// `mypass-sync sync VAULT --remote URL [--netrc-file FILE | --identity KEY --known-hosts FILE] [--dry-run | --watch] [--json]`.
struct SyncCommand: Command {
    func endsAfterOneJob(arguments: [String]) -> Bool { !arguments.prefix { $0 != "--" }.contains("--watch") }
    let name = "sync"
    let summary = "Keep a vault and its copy on a WebDAV or SFTP server in step (merged field by field, uploaded only by a verified compare-and-swap)."
    let usage = "mypass-sync sync <vault> --remote <https-or-sftp-url> [--netrc-file <file> | --identity <key> --known-hosts <file>] [--dry-run | --watch [--interval <seconds>]] [--json] [credentials]"
    let notes = """
        <vault> is this device's working copy. One run fetches the remote only if it changed, merges it against the version \
        both last agreed on, saves the working copy, replaces the remote only if it is still the version merged, reads the \
        upload back and remembers the new agreement. Someone else's write in between is fetched and merged, up to 5 rounds, \
        then exit 6. WebDAV (https://): conditional GET with the last ETag, PUT with If-Match (If-None-Match: * for a new \
        remote); the server is probed once on a scratch file beside the vault, and one whose ETags cannot be trusted is used \
        under a WebDAV lock, or refused (exit 6) when it has no locks; credentials from ~/.netrc or --netrc-file. SFTP \
        (sftp://[user@]host[:port]/path): upload to a temporary name, rename the vault aside, check that it is the version \
        merged, rename the upload in (never over an existing file); login by SSH key (ssh-agent, --identity, ~/.ssh/id_*); the \
        host key must be in ~/.ssh/known_hosts or --known-hosts (unknown or changed: exit 6, its fingerprint shown). No \
        password on the command line. Not reached: exit 7, the working copy untouched.
        """
    let remote = Option<String>("--remote", valueName: "url", help: "The vault on the server (https://, http:// to this machine, or sftp://).")
    let netrcFile = Option<String>("--netrc-file", valueName: "file", help: "Server credentials (netrc format) instead of ~/.netrc.")
    let identity = Option<String>("--identity", valueName: "file", help: "SFTP: the SSH private key (default: ssh-agent, then ~/.ssh/id_ed25519, id_ecdsa, id_rsa).")
    let knownHosts = Option<String>("--known-hosts", valueName: "file", help: "SFTP: the known-hosts file the server's key must be in (default ~/.ssh/known_hosts).")
    let dryRun = Flag("--dry-run", help: "Fetch and merge in memory; write nothing here or there.")
    let watch = Flag("--watch", help: "Keep syncing: when the working copy changes and every --interval seconds.")
    let interval = Option<Int>.number("--interval", valueName: "seconds", help: "With --watch: the longest wait between rounds (default 60).", in: 5...86_400)
    let json = Flag("--json", help: "Print one JSON document (schema 1).")
    let credentials = CredentialOptions()
    let stateOptions = StateOptions()

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        let parsed = try parse(arguments, count: 1...1)
        guard let url = parsed[remote] else { throw CommandLineError.usage(message: "--remote URL is required", command: name) }
        let cancellation = TransferCancellation()
        let target = try RemoteTarget(url: url, options: RemoteOptions(netrcFile: parsed[netrcFile], identityFile: parsed[identity],
                                                                         knownHostsFile: parsed[knownHosts], cancellation: cancellation))
        let vaultPath = parsed.positionals[0]
        _ = try credentials.read(parsed, path: vaultPath)  // a file that is not a vault is said before the password
        let vaultCredentials = try credentials.credentials(parsed, for: vaultPath, command: name)
        let state = try stateOptions.state(parsed)
        let settings = try DeviceSettings.load()
        let round = { try RemoteSync.run(vaultPath: vaultPath, remote: target, credentials: vaultCredentials, state: state,
                                         settings: settings, dryRun: parsed[dryRun]) }
        if parsed[watch] {
            guard !parsed[dryRun] else { throw CommandLineError.usage(message: "--watch and --dry-run exclude each other", command: name) }
            let loop = RemoteSyncLoop(cancellation: cancellation)
            let signals = ShutdownSignals { loop.stop() }
            var streams = StandardStreams()
            loop.run(vaultPath: vaultPath, on: state.fileSystem, interval: Double(parsed[interval] ?? 60), round: round) { outcome in
                switch outcome {
                case .synced(let report):
                    guard report.remoteChanged || report.uploaded || report.wroteLocal else { return }
                    streams.print(parsed[json] ? (try? JSONText.line(report)) ?? "" : Self.text(report))
                case .failed(let message, _):
                    streams.printError(parsed[json] ? (try? JSONText.line(SyncFailure(error: message))) ?? message : "error: \(message) (retrying)")
                }
            }
            signals.cancel()
            return .success
        }
        let report = try round()
        if parsed[json] {
            output.print(try JSONText.encode(report))
        } else {
            output.print(Self.text(report))
        }
        return .success
    }

    /// The human lines of one round.
    private static func text(_ report: RemoteSync.Report) -> String {
        do {
            var lines = ["remote: \(report.remote) (compare-and-swap: \(report.mode.rawValue)\(report.modeReason.map { "; \($0)" } ?? ""))"]
            lines.append(report.remoteChanged ? "fetched: the remote had changed; merged \(report.mergedFromRemote.count) change(s)" : "fetched: nothing new")
            lines += report.mergedFromRemote.map { "  " + ReportText.line($0) }
            lines.append(report.wroteLocal ? "working copy: \(report.dryRun ? "would be written" : "written")" : "working copy: unchanged")
            lines.append(report.uploaded ? "remote: \(report.dryRun ? "would be uploaded" : "uploaded and read back")" : "remote: unchanged")
            if report.attempts > 1 { lines.append("rounds: \(report.attempts) (another writer changed the remote meanwhile; merged)") }
            return lines.joined(separator: "\n")
        }
    }
}

/// A failed round of `sync --watch` as a JSON line.
private struct SyncFailure: Encodable {
    let event = "error"
    let error: String
}

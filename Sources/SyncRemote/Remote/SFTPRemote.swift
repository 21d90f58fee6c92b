internal import Foundation
internal import SyncFiles
internal import SyncState
internal import SyncCommit
internal import MyPassCrypto
internal import Synchronization
#if canImport(Glibc)
internal import Glibc
#endif

/// A vault file on an SFTP server. SFTP has no ETags and no conditional write, so a replace is built
/// from renames, which OpenSSH's sftp-server performs atomically and never over an existing name:
///
/// 1. upload to a temporary name beside the vault;
/// 2. rename the vault aside (atomic: from here on, nobody can change the file being replaced);
/// 3. download the moved file and compare its SHA-256 with the version merged — a difference means
///    someone wrote in between: their file is renamed back and the round is lost;
/// 4. rename the upload to the vault's name — refused if someone created the vault meanwhile (then
///    theirs stays and the round is lost);
/// 5. delete the moved-aside file.
///
/// What remains: between steps 2 and 4 the vault's name is absent (a reader sees no file for that
/// moment; a writer that creates it wins and is merged), and a writer that keeps the vault open across
/// step 2 and writes after step 3 writes into the moved-aside copy. An interrupted replace leaves the
/// vault under its aside name; the next fetch that finds no vault puts it back.
struct SFTPRemote: RemoteVault {
    let url: String
    var downloadLimit = FileReading.maximumSize
    private let path: String
    private let connection: SharedConnection

    /// `url` is `sftp://[user@]host[:port]/path/vault.kdbx` (`/~/path` from the login directory); no
    /// password in it. The known-hosts file defaults to `~/.ssh/known_hosts`.
    init(url: String, identityFile: String?, knownHostsFile: String?, cancellation: TransferCancellation? = nil) throws(RemoteFailure) {
        guard let parsed = URLComponents(string: url), parsed.scheme?.lowercased() == "sftp", let host = parsed.host, !host.isEmpty,
              !parsed.percentEncodedPath.isEmpty, !parsed.percentEncodedPath.hasSuffix("/") else {
            throw .unsupportedURL("\(url): not a URL of a file (sftp://server/path/vault.kdbx)")
        }
        guard parsed.password == nil else {
            throw .credentialsInURL(sftp: true)
        }
        let home = FileManager.default.homeDirectoryForCurrentUser.path
        let hostPart = host.contains(":") ? "[\(host)]" : host
        let endpoint = SFTPConnection.Endpoint(
            origin: "sftp://\(hostPart)" + (parsed.port.map { ":\($0)" } ?? ""),
            user: parsed.user ?? Self.loginName(),
            identityFile: identityFile ?? ["id_ed25519", "id_ecdsa", "id_rsa"].map { home + "/.ssh/" + $0 }.first {
                FileManager.default.fileExists(atPath: $0)
            },
            knownHostsFile: knownHostsFile ?? home + "/.ssh/known_hosts", cancellation: cancellation)
        let decoded = parsed.path
        self.url = url
        self.path = decoded.hasPrefix("/~/") ? String(decoded.dropFirst(3)) : decoded
        self.connection = SharedConnection(endpoint, url: url)
    }

    func probe() throws(RemoteFailure) -> ServerProbe {
        let scratch = sibling(".mypass-sync-probe-\(UUID().uuidString.prefix(8))")
        defer { for suffix in [".a", ".b", ".c"] { try? run { try $0.remove(scratch + suffix) } } }
        try run { connection in
            try connection.upload(Data(repeating: 0x61, count: 64), to: scratch + ".a")
            try connection.upload(Data(repeating: 0x62, count: 64), to: scratch + ".b")
        }
        // Over an existing name the rename must be refused: else step 4 could replace a file someone
        // created while the vault was aside.
        if (try? run { try $0.rename(scratch + ".a", to: scratch + ".b") }) != nil {
            return ServerProbe(mode: .refused, reason: "the server's rename replaces an existing file (a write landing while the vault is "
                               + "renamed aside could be overwritten)", probedAt: Int(Date().timeIntervalSince1970))
        }
        try run { try $0.rename(scratch + ".a", to: scratch + ".c") }
        return ServerProbe(mode: .rename, reason: nil, probedAt: Int(Date().timeIntervalSince1970))
    }

    func fetch(ifChangedFrom tag: String?) throws(RemoteFailure) -> RemoteFetch {
        if let bytes = try download(path) { return .content(bytes, tag: nil) }
        // No vault: an interrupted replace may have left it under its aside name; put it back, and
        // remove interrupted uploads (a replace still running elsewhere then loses its round and retries).
        let leftovers = try run { try $0.list(sibling("")) }.filter { $0.hasPrefix(asidePrefix) }
        for name in leftovers where name.hasSuffix(".upload") { try? run { try $0.remove(sibling(name)) } }
        for name in leftovers where name.hasSuffix(".replaced") {
            guard try renamed(sibling(name), to: path) else { continue }
            if let bytes = try download(path) { return .content(bytes, tag: nil) }
        }
        return .missing
    }

    func lock() throws(RemoteFailure) -> String {
        throw .unsupportedURL("\(url): SFTP has no locks")
    }

    func unlock(_ token: String) throws(RemoteFailure) {}

    func replace(with data: Data, expected: RemoteExpectation, lockToken: String?) throws(RemoteFailure) -> RemoteReplace {
        let id = UUID().uuidString.prefix(8)
        let upload = sibling(asidePrefix + id + ".upload")
        let aside = sibling(asidePrefix + id + ".replaced")
        try run { try $0.upload(data, to: upload) }
        guard case .version(_, let sha256) = expected else {
            // A new vault: the rename is refused if someone created one meanwhile.
            guard try renamed(upload, to: path) else { return lost(removing: [upload]) }
            return .stored
        }
        guard try renamed(path, to: aside) else { return lost(removing: [upload]) }  // gone or moved meanwhile
        let moved = try download(aside) ?? Data()
        guard SHA256.hexHash(moved) == sha256 else {
            // Someone wrote after the merge: their version goes back in place, or is handed over to be merged.
            try? run { try $0.remove(upload) }
            if try renamed(aside, to: path) { return .lostRace(displaced: nil) }
            // The name was taken again meanwhile: their moved version is merged by the next round and
            // kept on the server (renamed `.displaced`) until an upload holding it has landed.
            let kept = sibling(asidePrefix + id + ".displaced")
            if try renamed(aside, to: kept) { connection.keepUntilStored(kept) }
            return .lostRace(displaced: moved)
        }
        #if MYPASS_TEST_HOOKS
        TestHooks.beforeRenameIn()
        #endif
        guard try renamed(upload, to: path) else { return lost(removing: [upload, aside]) }  // created meanwhile: theirs stays
        for done in [aside] + connection.takeKept() { try? run { try $0.remove(done) } }
        return .stored
    }

    private var folder: String {
        path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
    }

    /// Temporary names are `.<vault name>.mypass-<id>.upload` / `.replaced` beside the vault.
    private var asidePrefix: String {
        "." + (path.split(separator: "/").last.map(String.init) ?? "vault") + ".mypass-"
    }

    private func sibling(_ name: String) -> String {
        folder.isEmpty && !path.hasPrefix("/") ? name : folder + "/" + name
    }

    /// A lost round: removes this round's own files (one may already be gone: another device put a
    /// moved-aside vault back).
    private func lost(removing paths: [String]) -> RemoteReplace {
        for path in paths { try? run { try $0.remove(path) } }
        return .lostRace(displaced: nil)
    }

    /// Renames; false when the server refuses (the source is gone or the target exists).
    private func renamed(_ from: String, to: String) throws(RemoteFailure) -> Bool {
        do {
            try connection.use { try $0.rename(from, to: to) }
            return true
        } catch let error as SFTPConnection.Failure {
            if case .commandFailed = error { return false }
            throw Self.failure(error, url: url)
        } catch {
            throw .unreachable(url: url, detail: "\(error)")
        }
    }

    /// The file, nil when there is none.
    private func download(_ path: String) throws(RemoteFailure) -> Data? {
        let limit = downloadLimit
        do {
            return try connection.use { try $0.download(path, limit: limit) }
        } catch let error as SFTPConnection.Failure {
            if case .notFound = error { return nil }
            throw Self.failure(error, url: url)
        } catch {
            throw .unreachable(url: url, detail: "\(error)")
        }
    }

    private func run<T: Sendable>(_ operation: sending (SFTPConnection) throws -> T) throws(RemoteFailure) -> T {
        do {
            return try connection.use(operation)
        } catch let error as SFTPConnection.Failure {
            throw Self.failure(error, url: url)
        } catch {
            throw .unreachable(url: url, detail: "\(error)")
        }
    }

    private static func failure(_ error: SFTPConnection.Failure, url: String) -> RemoteFailure {
        switch error {
        case .remote(let failure): failure
        case .notFound: .denied(url: url, detail: "no such file or folder on the server")
        case .commandFailed(let detail): .denied(url: url, detail: detail)
        }
    }

    private static func loginName() -> String {
        if let entry = getpwuid(geteuid()), let name = entry.pointee.pw_name { return String(cString: name) }
        return ProcessInfo.processInfo.environment["USER"] ?? "root"
    }

    /// The connection, opened on first use and kept for the sync (one SSH handshake per run). Every
    /// operation runs holding its mutex: a libcurl handle serves one thread at a time.
    final class SharedConnection: Sendable {
        private let endpoint: SFTPConnection.Endpoint
        private let url: String
        private let open = Mutex<SFTPConnection?>(nil)
        private let kept = Mutex<[String]>([])

        init(_ endpoint: SFTPConnection.Endpoint, url: String) {
            self.endpoint = endpoint
            self.url = url
        }

        /// Remembers a displaced version kept on the server until the next stored upload.
        func keepUntilStored(_ path: String) {
            kept.withLock { $0.append(path) }
        }

        /// The kept versions, forgotten (an upload holding them has landed).
        func takeKept() -> [String] {
            kept.withLock { kept in
                defer { kept = [] }
                return kept
            }
        }

        /// `operation` on the connection (opened first if need be), which no other thread uses meanwhile.
        func use<T: Sendable>(_ operation: sending (SFTPConnection) throws -> T) throws -> T {
            try open.withLock { open throws -> T in
                let connection: SFTPConnection
                if let open {
                    connection = open
                } else {
                    connection = try made()
                    open = connection
                }
                return try operation(connection)
            }
        }

        private func made() throws(SFTPConnection.Failure) -> SFTPConnection {
            do {
                return try SFTPConnection(endpoint, url: url)
            } catch {
                throw .remote(error)
            }
        }
    }
}

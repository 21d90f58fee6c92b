internal import Foundation
internal import SyncFiles
internal import SyncState
internal import SyncCommit
internal import CCurl
internal import MyPassCrypto

/// One SSH connection to an SFTP server through libcurl's libssh2 backend, kept open across the
/// operations of one sync: download, upload (new files are 0600) and the file commands SFTP has
/// (rename, rm). The server's host key must be in the known-hosts file — an unknown or changed key
/// refuses the connection and names the key's fingerprint; login is by SSH key (ssh-agent first, then
/// the key file), never by password.
final class SFTPConnection {
    /// Where and as whom.
    struct Endpoint: Sendable {
        /// `sftp://host[:port]` (no path).
        let origin: String
        let user: String
        let identityFile: String?
        let knownHostsFile: String
        var cancellation: TransferCancellation?
    }

    /// Why an operation did not happen.
    enum Failure: Error {
        /// No such file.
        case notFound
        /// A file command (rename, rm) was refused; the server's reason.
        case commandFailed(String)
        /// The connection or login failed, or a transfer broke off.
        case remote(RemoteFailure)
    }

    private let endpoint: Endpoint
    private let url: String
    private let handle: UnsafeMutableRawPointer
    private let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
    private let hostKey = HostKeyCheck()
    /// The limits of the operation in progress (`TransferGuard`).
    private var limits: TransferGuard

    private static let initialized: Bool = { mypass_curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK }()

    /// `url` names the vault (for messages).
    init(_ endpoint: Endpoint, url: String) throws(RemoteFailure) {
        guard Self.initialized, let handle = mypass_curl_easy_init() else { throw .unreachable(url: url, detail: "libcurl (libcurl.so.4, Debian package libcurl4) could not be opened or started") }
        self.endpoint = endpoint
        self.url = url
        self.handle = handle
        limits = TransferGuard(maximumBytes: nil, cancellation: endpoint.cancellation)
    }

    deinit {
        mypass_curl_easy_cleanup(handle)
        errorBuffer.deallocate()
    }

    /// The file at `path` (absolute, or relative to the login directory), at most `limit` bytes.
    func download(_ path: String, limit: Int64) throws(Failure) -> Data {
        try receive(path, namesOnly: false, limit: limit)
    }

    /// The names in the folder `path` (ending in "/"); a listing of more than 16 MiB is refused.
    func list(_ path: String) throws(Failure) -> [String] {
        String(decoding: try receive(path, namesOnly: true, limit: 16 << 20), as: UTF8.self).split(separator: "\n").map(String.init)
    }

    private func receive(_ path: String, namesOnly: Bool, limit: Int64) throws(Failure) -> Data {
        let sink = Sink(limits: TransferGuard(maximumBytes: limit, cancellation: endpoint.cancellation))
        prepare(path, limits: sink.limits)
        if namesOnly { mypass_curl_set_long(handle, CURLOPT_DIRLISTONLY, 1) }
        mypass_curl_set_pointer(handle, CURLOPT_WRITEDATA, Unmanaged.passUnretained(sink).toOpaque())
        mypass_curl_set_callback(handle, CURLOPT_WRITEFUNCTION) { data, size, count, context in
            let sink = Unmanaged<Sink>.fromOpaque(context!).takeUnretainedValue()
            guard sink.limits.accept(size * count) else { return 0 }
            if let data { sink.data.append(UnsafeRawPointer(data).assumingMemoryBound(to: UInt8.self), count: size * count) }
            return size * count
        }
        try perform()
        return sink.data
    }

    /// Writes `data` to `path`, creating it with mode 0600 (an existing file is truncated first).
    func upload(_ data: Data, to path: String) throws(Failure) {
        let source = Source(data)
        prepare(path)
        mypass_curl_set_long(handle, CURLOPT_UPLOAD, 1)
        mypass_curl_set_long(handle, CURLOPT_NEW_FILE_PERMS, 0o600)
        mypass_curl_set_offset(handle, CURLOPT_INFILESIZE_LARGE, curl_off_t(data.count))
        mypass_curl_set_pointer(handle, CURLOPT_READDATA, Unmanaged.passUnretained(source).toOpaque())
        mypass_curl_set_read_callback(handle) { buffer, size, count, context in
            let source = Unmanaged<Source>.fromOpaque(context!).takeUnretainedValue()
            return source.fill(buffer, capacity: size * count)
        }
        try perform()
    }

    /// Renames `from` to `to`. On OpenSSH's sftp-server this refuses to replace an existing `to`.
    func rename(_ from: String, to: String) throws(Failure) {
        try command("rename \(Self.quoted(from)) \(Self.quoted(to))", near: from)
    }

    /// Deletes `path`.
    func remove(_ path: String) throws(Failure) {
        try command("rm \(Self.quoted(path))", near: path)
    }

    /// Runs one SFTP file command (libcurl's "quote" commands) without a transfer.
    private func command(_ line: String, near path: String) throws(Failure) {
        var list: UnsafeMutablePointer<curl_slist>?
        list = mypass_curl_slist_append(list, line)
        defer { mypass_curl_slist_free_all(list) }
        let folder = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/") + "/"
        prepare(folder)
        mypass_curl_set_long(handle, CURLOPT_NOBODY, 1)
        mypass_curl_set_list(handle, CURLOPT_QUOTE, list)
        try perform()
    }

    /// Resets the handle (the connection stays open) and sets what every operation needs, held to
    /// `limits` (default: no download cap, the low-speed limit and the cancellation).
    private func prepare(_ path: String, limits: TransferGuard? = nil) {
        mypass_curl_easy_reset(handle)
        self.limits = limits ?? TransferGuard(maximumBytes: nil, cancellation: endpoint.cancellation)
        errorBuffer[0] = 0
        hostKey.reset()
        let encoded = path.split(separator: "/", omittingEmptySubsequences: false)
            .map { $0.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/;"))) ?? String($0) }
            .joined(separator: "/")
        // A path relative to the login directory is written `/~/path` in an SFTP URL.
        mypass_curl_set_string(handle, CURLOPT_URL, endpoint.origin + (path.hasPrefix("/") ? "" : "/~/") + encoded)
        mypass_curl_set_string(handle, CURLOPT_PROTOCOLS_STR, "sftp")
        mypass_curl_set_long(handle, CURLOPT_NOSIGNAL, 1)
        mypass_curl_set_long(handle, CURLOPT_CONNECTTIMEOUT, 10)
        mypass_curl_set_long(handle, CURLOPT_TIMEOUT, 300)
        mypass_curl_set_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer)
        self.limits.apply(to: handle)
        mypass_curl_set_string(handle, CURLOPT_USERNAME, endpoint.user)
        mypass_curl_set_long(handle, CURLOPT_SSH_AUTH_TYPES, mypass_curl_ssh_auth_keys_or_agent())
        if let identity = endpoint.identityFile {
            mypass_curl_set_string(handle, CURLOPT_SSH_PRIVATE_KEYFILE, identity)
            mypass_curl_set_string(handle, CURLOPT_SSH_PUBLIC_KEYFILE, "")  // derived from the private key
        }
        mypass_curl_set_string(handle, CURLOPT_SSH_KNOWNHOSTS, endpoint.knownHostsFile)
        mypass_curl_set_pointer(handle, CURLOPT_SSH_KEYDATA, Unmanaged.passUnretained(hostKey).toOpaque())
        mypass_curl_set_host_key_callback(handle) { _, _, found, match, context in
            let check = Unmanaged<HostKeyCheck>.fromOpaque(context!).takeUnretainedValue()
            check.record(found?.pointee, match)
            return Int32(match == CURLKHMATCH_OK ? CURLKHSTAT_FINE.rawValue : CURLKHSTAT_REJECT.rawValue)
        }
    }

    private func perform() throws(Failure) {
        let code = mypass_curl_easy_perform(handle)
        guard code != CURLE_OK else { return }
        if let failure = limits.failure(code, url: url) { throw .remote(failure) }
        let detail = errorBuffer[0] != 0 ? String(cString: errorBuffer) : String(cString: mypass_curl_easy_strerror(code))
        if let match = hostKey.match, match != CURLKHMATCH_OK {
            let fingerprint = hostKey.fingerprint ?? "unknown key"
            throw .remote(match == CURLKHMATCH_MISMATCH
                ? .changedHostKey(url: url, fingerprint: fingerprint, knownHosts: endpoint.knownHostsFile)
                : .unknownHostKey(url: url, fingerprint: fingerprint, knownHosts: endpoint.knownHostsFile))
        }
        switch code {
        case CURLE_REMOTE_FILE_NOT_FOUND: throw .notFound
        case CURLE_QUOTE_ERROR: throw .commandFailed(detail)
        case CURLE_LOGIN_DENIED:
            throw .remote(.denied(url: url, detail: "the server refused the login of \(endpoint.user) with "
                + (endpoint.identityFile.map { "the SSH key \($0)" } ?? "ssh-agent's keys or ~/.ssh/id_ed25519, id_ecdsa, id_rsa")))
        case CURLE_REMOTE_ACCESS_DENIED: throw .remote(.denied(url: url, detail: "permission denied on the server (\(detail))"))
        case CURLE_REMOTE_DISK_FULL: throw .remote(.denied(url: url, detail: "the server's disk is full; nothing was replaced"))
        case CURLE_UPLOAD_FAILED, CURLE_WRITE_ERROR: throw .remote(.denied(url: url, detail: "the server refused the upload (\(detail)); nothing was replaced"))
        default: throw .remote(.unreachable(url: url, detail: detail))
        }
    }

    /// `path` as one argument of a file command (libcurl splits at spaces outside double quotes).
    private static func quoted(_ path: String) -> String {
        "\"" + path.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    private final class Sink {
        var data = Data()
        let limits: TransferGuard
        init(limits: TransferGuard) { self.limits = limits }
    }

    private final class Source {
        let data: Data
        var offset = 0
        init(_ data: Data) { self.data = data }

        func fill(_ buffer: UnsafeMutablePointer<CChar>?, capacity: Int) -> Int {
            guard let buffer else { return 0 }
            let count = min(capacity, data.count - offset)
            data.withUnsafeBytes { bytes in
                buffer.withMemoryRebound(to: UInt8.self, capacity: count) { target in
                    target.update(from: bytes.baseAddress!.assumingMemoryBound(to: UInt8.self) + offset, count: count)
                }
            }
            offset += count
            return count
        }
    }

    /// What the host-key callback saw: the match against the known-hosts file and the key's fingerprint.
    private final class HostKeyCheck {
        var match: curl_khmatch?
        var fingerprint: String?

        func reset() {
            match = nil
            fingerprint = nil
        }

        func record(_ key: curl_khkey?, _ match: curl_khmatch) {
            self.match = match
            guard let key, let raw = key.key else { return }
            // libcurl hands over the raw key blob (len > 0); OpenSSH prints SHA256:base64-without-padding.
            let blob = key.len > 0 ? Data(bytes: raw, count: key.len) : Data(base64Encoded: String(cString: raw)) ?? Data()
            let encoded = SHA256.hash(blob).base64EncodedString().replacingOccurrences(of: "=", with: "")
            fingerprint = "SHA256:" + encoded
        }
    }
}

internal import Foundation
internal import SyncFiles
internal import SyncState
internal import SyncCommit
#if canImport(Glibc)
internal import Glibc
#endif

/// A vault file on a WebDAV server (Nextcloud, ownCloud, Apache mod_dav, wsgidav…), read and written
/// only with preconditions: a conditional `GET`, `PUT` with `If-Match` or `If-None-Match: *`, and
/// WebDAV locks for servers whose ETags cannot be trusted.
struct WebDAVRemote: RemoteVault {
    /// The vault's URL.
    let url: String
    /// Where server credentials come from (nil: `~/.netrc`).
    let netrcFile: String?
    let cancellation: TransferCancellation?
    var downloadLimit = FileReading.maximumSize

    /// `url` must be `https://…`, or `http://` to this machine only (tests, a local proxy): server
    /// credentials never cross a network in clear text.
    init(url: String, netrcFile: String? = nil, cancellation: TransferCancellation? = nil) throws(RemoteFailure) {
        // A password in the URL would be in argv and in every message that names the URL: refused, not echoed.
        if let parsed = URL(string: url), parsed.user != nil || parsed.password != nil {
            throw .credentialsInURL(sftp: false)
        }
        guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(), let host = parsed.host, !parsed.path.isEmpty,
              !parsed.path.hasSuffix("/") else {
            throw .unsupportedURL("\(url): not a URL of a file (https://server/path/vault.kdbx)")
        }
        let loopback = ["127.0.0.1", "::1", "[::1]", "localhost"].contains(host.lowercased())
        guard scheme == "https" || (scheme == "http" && loopback) else {
            throw .unsupportedURL("\(url): only https:// (or http:// to this machine) is used: credentials would cross the network in clear text")
        }
        self.url = url
        self.netrcFile = netrcFile
        self.cancellation = cancellation
    }

    /// `GET`, with `If-None-Match: etag` when one is known.
    func fetch(ifNoneMatch etag: String?, at target: String? = nil) throws(RemoteFailure) -> RemoteFetch {
        let response = try send("GET", at: target, headers: etag.map { ["If-None-Match: \($0)"] } ?? [])
        switch response.status {
        case 304: return .unchanged
        case 404: return .missing
        case 200: return .content(response.body, tag: response.headers["etag"])
        default: throw .refused(url: target ?? url, status: response.status)
        }
    }

    /// `fetch`, repeated after a second while the server gives the content a weak or no ETag: Apache
    /// marks the ETag of a file written less than a second ago as weak, and a weak ETag never matches
    /// `If-Match`. The content and the ETag always come from one response.
    func settledFetch(ifNoneMatch etag: String?, at target: String? = nil) throws(RemoteFailure) -> RemoteFetch {
        var fetched = try fetch(ifNoneMatch: etag, at: target)
        for _ in 0..<2 {
            guard case .content(_, let tag) = fetched, tag == nil || tag!.hasPrefix("W/") else { break }
            usleep(1_100_000)
            fetched = try fetch(ifNoneMatch: nil, at: target)
        }
        return fetched
    }

    /// The condition a `PUT` carries.
    enum Precondition {
        /// Only if the file still has this ETag.
        case ifMatch(String)
        /// None (the probe's own scratch file only).
        case none
        /// Only if there is no file yet.
        case ifNoneMatch
        /// Only while this WebDAV lock is held.
        case lock(String)
    }

    /// What a `PUT` did.
    enum Put {
        /// Written; the new ETag when the server sent one.
        case stored(etag: String?)
        /// The precondition failed: someone else wrote in between.
        case preconditionFailed
    }

    /// `PUT` of `data` under `precondition`.
    func put(_ data: Data, _ precondition: Precondition, at target: String? = nil) throws(RemoteFailure) -> Put {
        let header: [String] = switch precondition {
        case .ifMatch(let etag): ["If-Match: \(etag)"]
        case .ifNoneMatch: ["If-None-Match: *"]
        case .lock(let token): ["If: (\(token))"]
        case .none: []
        }
        let response = try send("PUT", at: target, headers: header + ["Content-Type: application/octet-stream"], body: data)
        switch response.status {
        case 200, 201, 204: return .stored(etag: response.headers["etag"])
        case 412: return .preconditionFailed
        default: throw .refused(url: target ?? url, status: response.status)
        }
    }

    func probe() throws(RemoteFailure) -> ServerProbe { try ServerProbe.webDAV(self) }

    func fetch(ifChangedFrom tag: String?) throws(RemoteFailure) -> RemoteFetch { try settledFetch(ifNoneMatch: tag) }

    /// A `PUT` under `If-Match` (or `If-None-Match: *` for a new file, or the lock's `If:` header).
    func replace(with data: Data, expected: RemoteExpectation, lockToken: String?) throws(RemoteFailure) -> RemoteReplace {
        let precondition: Precondition = switch (lockToken, expected) {
        case (let token?, _): .lock(token)
        case (nil, .version(let tag?, _)): .ifMatch(tag)
        case (nil, _): .ifNoneMatch
        }
        guard case .stored = try put(data, precondition) else { return .lostRace(displaced: nil) }
        return .stored
    }

    /// `HEAD`: the ETag, nil when the server sends none.
    func etag(at target: String? = nil) throws(RemoteFailure) -> String? {
        let response = try send("HEAD", at: target)
        guard response.status == 200 else { throw .refused(url: target ?? url, status: response.status) }
        return response.headers["etag"]
    }

    /// `DELETE` (a missing file is fine).
    func delete(at target: String? = nil) throws(RemoteFailure) {
        let response = try send("DELETE", at: target)
        guard [200, 202, 204, 404].contains(response.status) else { throw .refused(url: target ?? url, status: response.status) }
    }

    /// Whether the server speaks WebDAV class 2 (locks), from `OPTIONS`.
    func supportsLocks() throws(RemoteFailure) -> Bool {
        let response = try send("OPTIONS")
        return (response.headers["dav"] ?? "").split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces) == "2" }
    }

    /// Takes an exclusive write lock on the vault's URL for `seconds`; its lock token.
    func lock() throws(RemoteFailure) -> String {
        let seconds = 120
        let body = """
            <?xml version="1.0" encoding="utf-8"?>
            <D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype>\
            <D:owner>mypass-sync</D:owner></D:lockinfo>
            """
        let response = try send("LOCK", headers: ["Timeout: Second-\(seconds)", "Depth: 0", "Content-Type: application/xml; charset=utf-8"],
                                body: Data(body.utf8))
        guard [200, 201].contains(response.status), let token = response.headers["lock-token"] else {
            throw .refused(url: url, status: response.status == 200 ? 500 : response.status)
        }
        return token
    }

    /// Gives a lock back.
    func unlock(_ token: String) throws(RemoteFailure) {
        let response = try send("UNLOCK", headers: ["Lock-Token: \(token)"])
        guard [200, 204].contains(response.status) else { throw .refused(url: url, status: response.status) }
    }

    /// A name beside the vault (for the probe's scratch file).
    func sibling(_ name: String) -> String {
        let base = url.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        return base + "/" + name
    }

    private func send(_ method: String, at target: String? = nil, headers: [String] = [], body: Data? = nil) throws(RemoteFailure) -> CurlRequest.Response {
        var request = CurlRequest(method: method, url: target ?? url, headers: headers, body: body, netrcFile: netrcFile)
        request.maximumBodyBytes = downloadLimit
        request.cancellation = cancellation
        do {
            return try request.perform()
        } catch {
            throw error.classified ?? .unreachable(url: target ?? url, detail: error.description)
        }
    }
}

internal import Foundation
internal import SyncFiles
internal import SyncState
internal import SyncCommit
internal import CCurl

/// One HTTP request through libcurl (the only HTTP client of the package): method, headers and
/// body in, status, headers and body out. Server credentials come from a netrc file (libcurl's own
/// support), never from arguments; redirects are not followed (a precondition must reach the URL it
/// names); connections time out instead of hanging.
struct CurlRequest {
    var method: String
    var url: String
    var headers: [String] = []
    var body: Data?
    /// The netrc file to take server credentials from (nil: `~/.netrc` when it exists).
    var netrcFile: String?
    /// Seconds allowed to connect and for the whole transfer.
    var connectTimeout = 10
    var totalTimeout = 300
    /// The most the response body may bring (a running count: `TransferGuard`).
    var maximumBodyBytes: Int64?
    var cancellation: TransferCancellation?

    /// What came back.
    struct Response {
        let status: Int
        /// Header names in lower case; a repeated header's values joined with ", " (RFC 9110).
        let headers: [String: String]
        let body: Data
    }

    /// Why no response came.
    struct Failure: Error, CustomStringConvertible {
        let code: Int
        let description: String
        /// What the failure means under the transfer's limits (too large, stalled, cancelled).
        var classified: RemoteFailure?
    }

    private final class Collected {
        var body = Data()
        var headers: [String: String] = [:]
        let limits: TransferGuard
        init(_ limits: TransferGuard) { self.limits = limits }
    }

    private static let initialized: Bool = { mypass_curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK }()

    /// Performs the request once.
    func perform() throws(Failure) -> Response {
        guard Self.initialized, let handle = mypass_curl_easy_init() else { throw Failure(code: -1, description: "libcurl (libcurl.so.4, Debian package libcurl4) could not be opened or started") }
        defer { mypass_curl_easy_cleanup(handle) }
        let limits = TransferGuard(maximumBytes: maximumBodyBytes, cancellation: cancellation)
        let collected = Collected(limits)
        let context = Unmanaged.passUnretained(collected).toOpaque()
        var list: UnsafeMutablePointer<curl_slist>?
        defer { mypass_curl_slist_free_all(list) }
        // "Expect: 100-continue" would add a round trip and confuses some servers; never sent.
        for header in headers + ["Expect:"] { list = mypass_curl_slist_append(list, header) }

        mypass_curl_set_string(handle, CURLOPT_URL, url)
        mypass_curl_set_string(handle, CURLOPT_PROTOCOLS_STR, "http,https")
        mypass_curl_set_long(handle, CURLOPT_NOSIGNAL, 1)
        mypass_curl_set_long(handle, CURLOPT_CONNECTTIMEOUT, connectTimeout)
        mypass_curl_set_long(handle, CURLOPT_TIMEOUT, totalTimeout)
        mypass_curl_set_long(handle, CURLOPT_FOLLOWLOCATION, 0)
        limits.apply(to: handle)
        mypass_curl_set_long(handle, CURLOPT_NETRC, Int(CURL_NETRC_OPTIONAL.rawValue))
        if let netrcFile { mypass_curl_set_string(handle, CURLOPT_NETRC_FILE, netrcFile) }
        mypass_curl_set_long(handle, CURLOPT_HTTPAUTH, mypass_curl_auth_basic_or_digest())
        mypass_curl_set_list(handle, CURLOPT_HTTPHEADER, list)
        mypass_curl_set_pointer(handle, CURLOPT_WRITEDATA, context)
        mypass_curl_set_callback(handle, CURLOPT_WRITEFUNCTION) { data, size, count, context in
            let collected = Unmanaged<Collected>.fromOpaque(context!).takeUnretainedValue()
            guard collected.limits.accept(size * count) else { return 0 }
            if let data { collected.body.append(UnsafeRawPointer(data).assumingMemoryBound(to: UInt8.self), count: size * count) }
            return size * count
        }
        mypass_curl_set_pointer(handle, CURLOPT_HEADERDATA, context)
        mypass_curl_set_callback(handle, CURLOPT_HEADERFUNCTION) { data, size, count, context in
            let collected = Unmanaged<Collected>.fromOpaque(context!).takeUnretainedValue()
            if let data {
                let line = String(decoding: UnsafeRawBufferPointer(start: data, count: size * count), as: UTF8.self)
                if line.hasPrefix("HTTP/") {  // a new response (after a 401 challenge or a 100) starts over
                    collected.headers = [:]
                    collected.body = Data()
                }
                if let colon = line.firstIndex(of: ":") {
                    let name = line[..<colon].lowercased()
                    let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespacesAndNewlines)
                    collected.headers[name] = collected.headers[name].map { $0 + ", " + value } ?? value
                }
            }
            return size * count
        }
        switch method {
        case "GET": mypass_curl_set_long(handle, CURLOPT_HTTPGET, 1)
        case "HEAD": mypass_curl_set_long(handle, CURLOPT_NOBODY, 1)
        default: mypass_curl_set_string(handle, CURLOPT_CUSTOMREQUEST, method)
        }
        let code: CURLcode = (body ?? Data()).withUnsafeBytes { bytes in
            if body != nil {
                mypass_curl_set_offset(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(bytes.count))
                mypass_curl_set_pointer(handle, CURLOPT_POSTFIELDS, UnsafeMutableRawPointer(mutating: bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!))
            }
            return mypass_curl_easy_perform(handle)
        }
        guard code == CURLE_OK else {
            throw Failure(code: Int(code.rawValue), description: String(cString: mypass_curl_easy_strerror(code)),
                          classified: limits.failure(code, url: url))
        }
        var status = 0
        mypass_curl_get_long(handle, CURLINFO_RESPONSE_CODE, &status)
        return Response(status: status, headers: collected.headers, body: collected.body)
    }
}

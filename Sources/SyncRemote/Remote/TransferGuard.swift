internal import Foundation
internal import CCurl
internal import Synchronization

/// Ends a remote's transfers from another thread (`RemoteSyncLoop.stop()` on SIGTERM, an app going
/// to the background): a transfer in progress stops within a second, as a failure that says so.
public final class TransferCancellation: Sendable {
    private let cancelled = Atomic(false)

    public init() {}

    /// Stops every transfer that checks this, now and from now on.
    public func cancel() { cancelled.store(true, ordering: .releasing) }

    /// Whether `cancel()` was called.
    public var isCancelled: Bool { cancelled.load(ordering: .acquiring) }
}

/// What every transfer to or from a server is held to, in one place: a download larger than
/// `maximumBytes` is stopped by a running count of what arrived (libcurl's own maximum-size option
/// acts only on an announced size; a chunked body or an SFTP file announces none), a server that
/// sends less than `lowSpeedBytes` per second for `lowSpeedSeconds` is given up on, and a
/// cancellation ends the transfer within a second.
final class TransferGuard {
    /// The most a download may bring (nil: no download expected, or not capped).
    let maximumBytes: Int64?
    let cancellation: TransferCancellation?
    /// Slower than this many bytes per second for `lowSpeedSeconds`: the server is given up on.
    static let lowSpeedBytes = 1024
    /// 30 s; a debug build takes `MYPASS_SYNC_LOW_SPEED_SECONDS` (tests of a dripping server).
    static let lowSpeedSeconds: Int = {
        #if MYPASS_TEST_HOOKS
        if let value = ProcessInfo.processInfo.environment["MYPASS_SYNC_LOW_SPEED_SECONDS"].flatMap(Int.init), value > 0 { return value }
        #endif
        return 30
    }()

    private(set) var received: Int64 = 0
    private(set) var exceeded = false

    init(maximumBytes: Int64?, cancellation: TransferCancellation?) {
        self.maximumBytes = maximumBytes
        self.cancellation = cancellation
    }

    /// Sets the limits on `handle`; `self` must outlive the transfer.
    func apply(to handle: UnsafeMutableRawPointer) {
        received = 0
        exceeded = false
        mypass_curl_set_long(handle, CURLOPT_LOW_SPEED_LIMIT, Self.lowSpeedBytes)
        mypass_curl_set_long(handle, CURLOPT_LOW_SPEED_TIME, Self.lowSpeedSeconds)
        if let maximumBytes { mypass_curl_set_offset(handle, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(maximumBytes)) }
        mypass_curl_set_progress_callback(handle, { context, _, _, _, _ in
            let check = Unmanaged<TransferGuard>.fromOpaque(context!).takeUnretainedValue()
            return check.cancellation?.isCancelled == true ? 1 : 0
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Counts `count` more bytes of a download; false (the transfer is stopped) past `maximumBytes`.
    func accept(_ count: Int) -> Bool {
        received += Int64(count)
        if let maximumBytes, received > maximumBytes { exceeded = true }
        return !exceeded
    }

    /// The failure a libcurl result `code` means under these limits, nil when it is another one.
    func failure(_ code: CURLcode, url: String) -> RemoteFailure? {
        if exceeded || code == CURLE_FILESIZE_EXCEEDED { return .tooLarge(url: url, limit: maximumBytes ?? 0) }
        if code == CURLE_ABORTED_BY_CALLBACK && cancellation?.isCancelled == true { return .cancelled(url: url) }
        if code == CURLE_OPERATION_TIMEDOUT {
            return .stalled(url: url, detail: "less than \(Self.lowSpeedBytes) bytes a second for \(Self.lowSpeedSeconds) s, or no answer "
                            + "within the time allowed")
        }
        return nil
    }
}

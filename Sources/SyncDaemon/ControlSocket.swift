public import Foundation
internal import Synchronization
internal import SyncFiles
public import SyncCommit
#if canImport(Glibc)
internal import Glibc
#endif

/// The daemon's control socket, `$XDG_RUNTIME_DIR/mypass-sync/daemon.sock`: a Unix stream socket in a
/// folder only its user can enter (0700, checked to be theirs and not a symlink), in a runtime
/// directory that must be an absolute path, theirs, not a symlink and not writable by others
/// (`RuntimeFolders`). Both ends check: the daemon before it listens, a client before it sends
/// anything (and then that the daemon answering runs as the same user, `SO_PEERCRED`). One request per
/// connection, read within `requestTime` and `ControlRequest.maximumSize`; a peer running as another
/// user is answered with a refusal and nothing else; a malformed request with an error. Connections are served on threads of their own (at most `maximumConnections` at once), so
/// a slow one holds up no other.
public final class ControlSocket: Sendable {
    /// Why the socket could not be set up or reached.
    public enum Failure: Error, CustomStringConvertible, Sendable {
        /// Neither `XDG_RUNTIME_DIR` nor `/run/user/UID` is there.
        case noRuntimeDirectory
        /// `XDG_RUNTIME_DIR` is not an absolute path (the XDG base directory rules make it invalid).
        case relativeRuntimeDirectory(String)
        /// The folder is another user's, a symlink, or could not be made private.
        case unsafeFolder(String)
        /// The socket's path does not fit in a Unix socket address.
        case socketPathTooLong(String)
        /// The process answering on the socket runs as another user (its user id, nil when unknown).
        case untrustedPeer(path: String, userID: UInt32?)
        /// Another daemon answers on the socket.
        case alreadyRunning(String)
        /// A system call failed.
        case system(String, Int32)
        /// No daemon listens.
        case noDaemon(String)
        /// The daemon did not answer in time, or its answer could not be read.
        case noAnswer(String)

        public var description: String {
            switch self {
            case .noRuntimeDirectory: "no runtime directory: XDG_RUNTIME_DIR is not set and /run/user/\(getuid()) is not there"
            case .relativeRuntimeDirectory(let value): "XDG_RUNTIME_DIR is \(value), not an absolute path; set it to an absolute path (or unset it)"
            case .unsafeFolder(let reason): reason
            case .socketPathTooLong(let path): "the socket path \(path) is too long"
            case .untrustedPeer(let path, let userID):
                "refused: the process answering on \(path) runs as \(userID.map { "user \($0)" } ?? "an unknown user"), not as you; nothing was sent"
            case .alreadyRunning(let path): "a daemon already runs (it answers on \(path))"
            case .system(let call, let code): "\(call) failed: \(String(cString: strerror(code)))"
            case .noDaemon(let path): "no daemon runs (nothing answers on \(path)); start one with `mypass-sync daemon run` or "
                + "`systemctl --user start mypass-sync`"
            case .noAnswer(let reason): "the daemon did not answer: \(reason)"
            }
        }
    }

    /// How long a peer has to send its request.
    public static let requestTime: TimeInterval = 5

    /// The socket's path: `$XDG_RUNTIME_DIR/mypass-sync/daemon.sock` (else `/run/user/UID/…`), the
    /// runtime directory checked first (`RuntimeFolders.checkRuntimeDirectory`).
    public static func defaultPath() throws(Failure) -> String {
        let runtime = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/run/user/\(getuid())"
        try RuntimeFolders.checkRuntimeDirectory(runtime)
        return runtime + "/mypass-sync/daemon.sock"
    }

    private let path: String
    private let descriptor: Int32
    private let handler: @Sendable (ControlRequest) -> ControlAnswer
    /// Whether `close` was called, and how many requests are being answered.
    private let state = Mutex<(closed: Bool, serving: Int)>((false, 0))
    /// The most connections answered at once; more are told the daemon is busy.
    static let maximumConnections = 16

    /// Listens on `path` (its folder made 0700 and checked); `handler` answers each well-formed
    /// request of a peer of this user. A socket nobody answers on (a daemon that died) is replaced.
    public init(path: String, handler: @escaping @Sendable (ControlRequest) -> ControlAnswer) throws(Failure) {
        self.path = path
        self.handler = handler
        try RuntimeFolders.preparePrivateFolder((path as NSString).deletingLastPathComponent)
        if SystemCalls.status(atPath: path, on: .real) != nil {
            if (try? Self.connect(to: path)).map({ Glibc.close($0) }) != nil { throw .alreadyRunning(path) }
            unlink(path)
        }
        let socketDescriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socketDescriptor >= 0 else { throw .system("socket", errno) }
        var address = try Self.address(path)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socketDescriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, chmod(path, 0o600) == 0, listen(socketDescriptor, 16) == 0 else {
            let code = errno
            Glibc.close(socketDescriptor)
            throw .system("bind/listen \(path)", code)
        }
        descriptor = socketDescriptor
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "mypass-sync control"
        thread.start()
    }

    /// Stops listening and removes the socket.
    public func close() {
        let first: Bool = state.withLock { state in
            defer { state.closed = true }
            return !state.closed
        }
        guard first else { return }
        unlink(path)
        shutdown(descriptor, Int32(SHUT_RDWR))
        Glibc.close(descriptor)
    }

    private var isClosed: Bool { state.withLock { $0.closed } }

    private func acceptLoop() {
        while !isClosed {
            let connection = SocketPeer.accept(on: descriptor)
            if connection < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                return
            }
            let handler = self.handler
            guard state.withLock({ state -> Bool in
                guard state.serving < Self.maximumConnections else { return false }
                state.serving += 1
                return true
            }) else {
                Self.write(ControlAnswer.failure("busy: \(Self.maximumConnections) requests are being answered; try again"), to: connection)
                Glibc.close(connection)
                continue
            }
            Thread { [self] in
                Self.serve(connection, handler: handler)
                state.withLock { $0.serving -= 1 }
            }.start()
        }
    }

    /// Reads one request (bounded in size and time), answers it, closes the connection.
    private static func serve(_ connection: Int32, handler: (ControlRequest) -> ControlAnswer) {
        defer { Glibc.close(connection) }
        setTimeout(connection, requestTime)
        guard SocketPeer.userID(of: connection) == getuid() else {
            write(ControlAnswer.failure("refused: the daemon answers only its own user"), to: connection)
            drain(connection)
            return
        }
        let answer: ControlAnswer
        switch readRequest(connection) {
        case .success(let bytes):
            switch ControlRequest.parse(bytes) {
            case .success(let request): answer = handler(request)
            case .failure(let refusal): answer = refusal
            }
        case .failure(let refusal):
            answer = refusal
        }
        write(answer, to: connection)
        drain(connection)
    }

    /// After the answer: the peer's end of writing awaited (what it still sends read and dropped, at
    /// most `drainLimit` bytes, within `requestTime`), so that closing does not reset the connection
    /// before the peer read the answer (a refused oversized request).
    private static func drain(_ connection: Int32) {
        shutdown(connection, Int32(SHUT_WR))
        var buffer = [UInt8](repeating: 0, count: 65536)
        var total = 0
        let deadline = Date().addingTimeInterval(requestTime)
        while total < drainLimit && Date() < deadline {
            let count = read(connection, &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return }
            total += count
        }
    }

    /// The most a peer may send after its request before the connection is closed on it.
    static let drainLimit = 1 << 20

    /// The bytes up to the first newline or the peer's end of writing; an error answer when the
    /// request is too large or does not come in time.
    private static func readRequest(_ connection: Int32) -> Result<Data, ControlAnswer> {
        var bytes = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        let deadline = Date().addingTimeInterval(requestTime)
        while Date() < deadline {
            let count = read(connection, &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            if count < 0 { return .failure(.failure("no complete request within \(Int(requestTime)) s")) }
            if count == 0 { break }
            bytes.append(contentsOf: buffer[0..<count])
            if bytes.count > ControlRequest.maximumSize { return .failure(.failure("request larger than \(ControlRequest.maximumSize) bytes")) }
            if let newline = bytes.firstIndex(of: UInt8(ascii: "\n")) { return .success(bytes[..<newline]) }
        }
        return bytes.isEmpty ? .failure(.failure("empty request")) : .success(bytes)
    }

    private static func write(_ answer: ControlAnswer, to connection: Int32) {
        write(bytes: answer.line, to: connection)
    }

    /// Sends `request` to the daemon listening on `path` and returns its answer (waiting up to
    /// `timeout` seconds: a decision may merge a large vault). Nothing is sent unless the socket's
    /// folder is this user's private one and the process answering runs as this user.
    public static func send(_ request: ControlRequest, to path: String, timeout: TimeInterval = 120) throws(Failure) -> ControlAnswer {
        try RuntimeFolders.checkPrivateFolder((path as NSString).deletingLastPathComponent)
        let connection = try connect(to: path)
        defer { Glibc.close(connection) }
        let peer = SocketPeer.userID(of: connection)
        guard peer == getuid() else { throw .untrustedPeer(path: path, userID: peer) }
        setTimeout(connection, timeout)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        write(bytes: ((try? encoder.encode(request)) ?? Data()) + Data("\n".utf8), to: connection)
        var bytes = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(connection, &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            if count < 0 { throw .noAnswer(String(cString: strerror(errno))) }
            if count == 0 { break }
            bytes.append(contentsOf: buffer[0..<count])
            guard bytes.count <= 16 << 20 else { throw .noAnswer("answer too large") }
        }
        do {
            return try ControlAnswer.decode(bytes)
        } catch {
            throw .noAnswer("the answer is not JSON")
        }
    }

    /// Sends all of `bytes` (a peer that went away ends it quietly: no SIGPIPE).
    private static func write(bytes: Data, to connection: Int32) {
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = Glibc.send(connection, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                if written < 0 && errno == EINTR { continue }
                if written <= 0 { return }
                offset += written
            }
        }
    }

    private static func connect(to path: String) throws(Failure) -> Int32 {
        let connection = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard connection >= 0 else { throw .system("socket", errno) }
        var address = try address(path)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(connection, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else {
            let code = errno
            Glibc.close(connection)
            if code == ENOENT || code == ECONNREFUSED { throw .noDaemon(path) }
            throw .system("connect \(path)", code)
        }
        return connection
    }

    private static func address(_ path: String) throws(Failure) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { throw .socketPathTooLong(path) }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
        }
        return address
    }

    private static func setTimeout(_ connection: Int32, _ seconds: TimeInterval) {
        var time = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - seconds.rounded(.down)) * 1_000_000))
        setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(connection, SOL_SOCKET, SO_SNDTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
    }
}

extension ControlSocket.Failure: ClassifiedFailure {
    /// A relative `XDG_RUNTIME_DIR`: an invalid request (exit 2). A runtime folder or a daemon of
    /// another user: refused for safety (exit 6). No daemon, no answer, no runtime folder, a socket
    /// in use: an I/O error (exit 7).
    public var failureKind: FailureKind {
        switch self {
        case .relativeRuntimeDirectory: .invalidRequest
        case .unsafeFolder, .untrustedPeer: .refusedForSafety
        case .noRuntimeDirectory, .alreadyRunning, .system, .noDaemon, .noAnswer, .socketPathTooLong: .ioError
        }
    }
}

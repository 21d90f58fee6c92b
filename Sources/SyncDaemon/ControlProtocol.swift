public import Foundation
public import SyncCommit

/// A request to the running daemon over its control socket: one JSON object on one line
/// (`{"request": "pause", "vault": "/path"}`), at most `maximumSize` bytes. Untrusted: anything
/// else is answered with an error.
public struct ControlRequest: Sendable, Codable, Equatable {
    /// What is asked.
    public enum Kind: String, Sendable, Codable {
        case status, pause, resume, decide, reload
    }

    public var request: Kind
    /// The vault (pause, resume, decide).
    public var vault: String?
    /// The decision (decide): reload, overwrite or merge (`SyncSession.Decision`).
    public var decision: String?

    /// The largest request read.
    public static let maximumSize = 8192

    public init(_ request: Kind, vault: String? = nil, decision: SyncSession.Decision? = nil) {
        self.request = request
        self.vault = vault
        self.decision = decision?.rawValue
    }

    /// The request in `bytes`, or why it is not one.
    public static func parse(_ bytes: Data) -> Result<ControlRequest, ControlAnswer> {
        guard bytes.count <= maximumSize else { return .failure(.failure("request larger than \(maximumSize) bytes")) }
        guard let request = try? JSONDecoder().decode(ControlRequest.self, from: bytes) else {
            return .failure(.failure("malformed request: one JSON object such as {\"request\": \"status\"} is expected"))
        }
        switch request.request {
        case .pause, .resume, .decide:
            guard request.vault != nil else { return .failure(.failure("\(request.request.rawValue) needs a vault")) }
            if request.request == .decide && request.decision.flatMap(SyncSession.Decision.init(rawValue:)) == nil {
                return .failure(.failure("decide needs a decision: reload, overwrite or merge"))
            }
        case .status, .reload:
            break
        }
        return .success(request)
    }
}

/// The daemon's answer: `ok`, and the status, what a reload changed, what a decision did, or the error.
public struct ControlAnswer: Error, Sendable, Codable, Equatable {
    public var ok: Bool
    public var error: String?
    public var status: DaemonStatus?
    public var reload: VaultDaemon.ReloadOutcome?
    public var done: String?

    public init(ok: Bool, error: String? = nil, status: DaemonStatus? = nil, reload: VaultDaemon.ReloadOutcome? = nil, done: String? = nil) {
        self.ok = ok
        self.error = error
        self.status = status
        self.reload = reload
        self.done = done
    }

    /// A refusal with its reason.
    public static func failure(_ message: String) -> ControlAnswer { ControlAnswer(ok: false, error: message) }

    /// The answer as one JSON line.
    public var line: Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return ((try? encoder.encode(self)) ?? Data(#"{"ok":false}"#.utf8)) + Data("\n".utf8)
    }

    /// An answer read back from `bytes`.
    public static func decode(_ bytes: Data) throws -> ControlAnswer {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(ControlAnswer.self, from: bytes)
    }
}

extension VaultDaemon {
    /// Carries out `request` and says how it went.
    public func answer(_ request: ControlRequest) -> ControlAnswer {
        do throws(ControlFailure) {
            switch request.request {
            case .status:
                return ControlAnswer(ok: true, status: status())
            case .reload:
                return ControlAnswer(ok: true, reload: reload())
            case .pause:
                try pause(request.vault ?? "")
                return ControlAnswer(ok: true, done: "paused")
            case .resume:
                try resume(request.vault ?? "")
                return ControlAnswer(ok: true, done: "resumed")
            case .decide:
                return ControlAnswer(ok: true, done: try decide(request.vault ?? "", request.decision.flatMap(SyncSession.Decision.init(rawValue:)) ?? .merge))
            }
        } catch {
            return .failure(error.description)
        }
    }
}

public import Foundation
public import SyncCommit

/// A request to the running daemon over its control socket: one JSON object on one line
/// (`{"request": "pause", "vault": "/path"}`), at most `maximumSize` bytes. Untrusted: parsed once
/// into this value (`parse`); anything else is answered with an error.
public enum ControlRequest: Sendable, Equatable, Encodable {
    case status
    case reload
    case pause(vault: String)
    case resume(vault: String)
    /// A decision on a vault that waits for one.
    case decide(vault: String, SyncSession.Decision)

    /// The largest request read.
    public static let maximumSize = 8192

    /// The vault it is about (pause, resume, decide).
    public var vault: String? {
        switch self {
        case .status, .reload: nil
        case .pause(let vault), .resume(let vault), .decide(let vault, _): vault
        }
    }

    /// The request as it travels: every field a string.
    private struct Wire: Codable {
        enum Kind: String, Codable { case status, pause, resume, decide, reload }
        var request: Kind
        var vault: String?
        var decision: String?
    }

    private var wire: Wire {
        switch self {
        case .status: Wire(request: .status)
        case .reload: Wire(request: .reload)
        case .pause(let vault): Wire(request: .pause, vault: vault)
        case .resume(let vault): Wire(request: .resume, vault: vault)
        case .decide(let vault, let decision): Wire(request: .decide, vault: vault, decision: decision.rawValue)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        try wire.encode(to: encoder)
    }

    /// The request in `bytes`, or why it is not one.
    public static func parse(_ bytes: Data) -> Result<ControlRequest, ControlAnswer> {
        guard bytes.count <= maximumSize else { return .failure(.failure("request larger than \(maximumSize) bytes")) }
        guard let wire = try? JSONDecoder().decode(Wire.self, from: bytes) else {
            return .failure(.failure("malformed request: one JSON object such as {\"request\": \"status\"} is expected"))
        }
        switch wire.request {
        case .status: return .success(.status)
        case .reload: return .success(.reload)
        case .pause, .resume, .decide:
            guard let vault = wire.vault else { return .failure(.failure("\(wire.request.rawValue) needs a vault")) }
            switch wire.request {
            case .pause: return .success(.pause(vault: vault))
            case .resume: return .success(.resume(vault: vault))
            default:
                guard let decision = wire.decision.flatMap(SyncSession.Decision.init(rawValue:)) else {
                    return .failure(.failure("decide needs a decision: reload, overwrite or merge"))
                }
                return .success(.decide(vault: vault, decision))
            }
        }
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
            switch request {
            case .status:
                return ControlAnswer(ok: true, status: status())
            case .reload:
                return ControlAnswer(ok: true, reload: reload())
            case .pause(let vault):
                try pause(vault)
                return ControlAnswer(ok: true, done: "paused")
            case .resume(let vault):
                try resume(vault)
                return ControlAnswer(ok: true, done: "resumed")
            case .decide(let vault, let decision):
                return ControlAnswer(ok: true, done: try decide(vault, decision))
            }
        } catch {
            return .failure(error.description)
        }
    }
}

internal import Foundation
public import SyncCommit
public import KDBXFormat
public import SyncFiles
public import SyncState
internal import SyncCredentials
internal import MyPassCrypto

/// Where a vault's credentials come from, as the daemon's configuration keeps them: a password
/// command or the desktop keyring (or no password), a key file's path, a challenge-response
/// source. A reference, never a secret: the password is obtained when the vault is opened.
public struct CredentialReference: Sendable, Equatable {
    /// Where the password comes from.
    public enum Password: Sendable, Equatable {
        /// No password (a key file only).
        case none
        /// A program that prints it (`/bin/sh -c`, its first line).
        case command(String)
        /// The desktop keyring (Secret Service), by the database's identity.
        case keyring
    }

    /// A challenge-response key component.
    public enum ChallengeResponseSource: Sendable, Equatable {
        /// A YubiKey slot, `SLOT[:SERIAL]`.
        case yubiKey(String)
        /// A file holding the key's secret in hex.
        case secretFile(String)
        /// A program that answers the challenge.
        case command(String)
    }

    /// The kind of source, as `daemon status` names it.
    public enum Kind: String, Sendable, Codable {
        case passwordCommand, keyring, keyFile, challengeResponse
    }

    public var password: Password = .none
    /// The key file's absolute path.
    public var keyFile: String?
    public var challengeResponse: ChallengeResponseSource?

    /// No credentials yet.
    public init(password: Password = .none, keyFile: String? = nil, challengeResponse: ChallengeResponseSource? = nil) {
        self.password = password
        self.keyFile = keyFile
        self.challengeResponse = challengeResponse
    }

    /// The main source of these credentials (the password's; else the key file; else challenge-response).
    public var kind: Kind {
        switch password {
        case .command: .passwordCommand
        case .keyring: .keyring
        case .none: keyFile != nil ? .keyFile : .challengeResponse
        }
    }

    /// Why these references cannot open a vault, or nil.
    public var problem: String? {
        if password == .none && keyFile == nil { return "no password source and no key file" }
        return nil
    }

    /// The vault at `vaultPath` checked with the credentials these references give, on `standIn`
    /// (the vault, or the copy standing in for it while it is missing): read under the rule for a
    /// credential check (`VaultFile.readForCredentialCheck`: the budget for versions from elsewhere,
    /// measured against the base in `state`, where it applies; else `limits`), then opened; the
    /// credentials, to be kept.
    public func open(
        _ vaultPath: String, standIn: String, state: SyncStateStore, limits: ResourceLimits = .standard, on fileSystem: FileSystem
    ) throws -> (file: VaultFile, credentials: VaultCredentials) {
        let checked = try VaultFile.readForCredentialCheck(vault: vaultPath, standIn: standIn, state: state, limits: limits, on: fileSystem)
        let file = checked.file
        let keyFileBytes = try keyFile.map { try FileReading.readAll(atPath: $0, on: fileSystem) }
        let component = try challengeResponseComponent()
        switch password {
        case .keyring:
            let found = try DesktopKeyring.unlock(file, keyFile: keyFileBytes, challengeResponse: component,
                                                  candidates: checked.derivations(atMost: DesktopKeyring.maximumCandidates))
            return (file, found.credentials)
        case .command(let line):
            let plain = try VaultCredentials(password: try PasswordCommand(line).password(), keyFile: keyFileBytes)
            let credentials = component.map(plain.adding) ?? plain
            _ = try file.unlock(credentials)
            return (file, credentials)
        case .none:
            let plain = try VaultCredentials(password: nil, keyFile: keyFileBytes)
            let credentials = component.map(plain.adding) ?? plain
            _ = try file.unlock(credentials)
            return (file, credentials)
        }
    }

    private func challengeResponseComponent() throws -> (any ChallengeResponse)? {
        switch challengeResponse {
        case .yubiKey(let slot): try YubiKeyChallengeResponse(parsing: slot)
        case .secretFile(let path): try ChallengeResponseSecret(file: path)
        case .command(let line): ChallengeResponseCommand(line)
        case nil: nil
        }
    }

    /// The references as lines of the configuration file.
    var settingLines: [String] {
        var lines: [String] = []
        switch password {
        case .none: lines.append("no-password = yes")
        case .command(let line): lines.append("password-command = \(line)")
        case .keyring: lines.append("password-from = keyring")
        }
        if let keyFile { lines.append("key-file = \(keyFile)") }
        switch challengeResponse {
        case .yubiKey(let slot): lines.append("yubikey = \(slot)")
        case .secretFile(let path): lines.append("challenge-response-secret = \(path)")
        case .command(let line): lines.append("challenge-response-command = \(line)")
        case nil: break
        }
        return lines
    }

    /// Collects the credential lines of a configuration section, then says whether they make a reference.
    struct Builder {
        private var passwords: [Password] = []
        private var keyFile: String?
        private var challengeResponses: [ChallengeResponseSource] = []

        /// Takes one `key = value`; the problem's message, or nil (an unknown key is one).
        mutating func set(key: String, value: String) -> String? {
            func absolute(_ name: String) -> String? { value.hasPrefix("/") ? nil : "\(name) must be an absolute path" }
            switch key {
            case "password-command":
                guard !value.isEmpty else { return "password-command is empty" }
                passwords.append(.command(value))
            case "password-from":
                guard value == "keyring" else { return "password-from takes keyring" }
                passwords.append(.keyring)
            case "no-password":
                guard value == "yes" else { return "no-password takes yes" }
                passwords.append(.none)
            case "key-file":
                if let problem = absolute(key) { return problem }
                keyFile = value
            case "yubikey":
                challengeResponses.append(.yubiKey(value))
            case "challenge-response-secret":
                if let problem = absolute(key) { return problem }
                challengeResponses.append(.secretFile(value))
            case "challenge-response-command":
                guard !value.isEmpty else { return "challenge-response-command is empty" }
                challengeResponses.append(.command(value))
            default:
                return "unknown setting `\(key)`"
            }
            return nil
        }

        /// The reference the section's lines make, or why they make none.
        var reference: Result<CredentialReference, Failure> {
            guard passwords.count == 1 else {
                return .failure(Failure(passwords.isEmpty ? "no password-command, password-from or no-password"
                                                          : "more than one of password-command, password-from, no-password"))
            }
            guard challengeResponses.count <= 1 else { return .failure(Failure("more than one challenge-response source")) }
            let reference = CredentialReference(password: passwords[0], keyFile: keyFile, challengeResponse: challengeResponses.first)
            if let problem = reference.problem { return .failure(Failure(problem)) }
            return .success(reference)
        }
    }

    /// Why a section's credential lines make no reference.
    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}

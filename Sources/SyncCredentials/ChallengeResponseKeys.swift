public import Foundation
internal import SyncFiles
public import KDBXFormat
public import MyPassCrypto

/// A YubiKey's HMAC-SHA1 secret kept in software (Strongbox's "virtual hardware key", a backup of
/// the key's secret): it answers exactly as the key would.
public struct ChallengeResponseSecret: ChallengeResponse {
    private let secret: SecureBytes

    /// The secret from `text`: hex digits (40 for a YubiKey's 20-byte secret), spaces and a line end allowed.
    public init(hex text: String) throws(KDBXError) {
        let digits = text.filter { !$0.isWhitespace }
        guard !digits.isEmpty, digits.count % 2 == 0, digits.count <= 128, let bytes = Data(hexDigits: digits) else {
            throw .challengeResponseFailed("the challenge-response secret is not hex digits (a YubiKey's is 40)")
        }
        secret = SecureBytes(bytes)
    }

    /// The secret kept in the file at `path`, refused as ssh refuses a private key: a symlink, not a
    /// regular file, another user's, or readable or writable by anyone but its owner.
    public init(file path: String) throws {
        var (bytes, status): (Data, stat)
        do {
            (bytes, status) = try FileReading.readWithStatus(atPath: path, on: .real, followSymlinks: false, limit: 4096)
        } catch .notARegularFile {
            throw KDBXError.challengeResponseFailed("the challenge-response secret \(path) is not a regular file (a symlink?); refused")
        } catch {
            throw KDBXError.challengeResponseFailed("the challenge-response secret: \(error)")
        }
        defer { bytes.resetBytes(in: 0..<bytes.count) }
        guard status.st_uid == getuid() else {
            throw KDBXError.challengeResponseFailed("the challenge-response secret \(path) belongs to another user; refused")
        }
        guard status.st_mode & 0o077 == 0 else {
            throw KDBXError.challengeResponseFailed(
                "the challenge-response secret \(path) is open to others (mode \(String(status.st_mode & 0o777, radix: 8))); "
                + "refused: chmod 600 it")
        }
        try self.init(hex: String(decoding: bytes, as: UTF8.self))
    }

    public func response(to challenge: Data) throws -> Data {
        HMACSHA1.authenticationCode(for: challenge, key: secret)
    }
}

/// A program that answers for the key (`--challenge-response-command CMD`): run with `/bin/sh -c`,
/// the challenge in hex on its standard input, the response in hex (40 digits) on its standard output.
public struct ChallengeResponseCommand: ChallengeResponse {
    public let command: String
    public let timeout: TimeInterval

    public init(_ command: String, timeout: TimeInterval = 120) {
        self.command = command
        self.timeout = timeout
    }

    public func response(to challenge: Data) throws -> Data {
        let hex = challenge.map { String(format: "%02x", $0) }.joined() + "\n"
        let (status, output): (Int32, Data)
        do {
            (status, output) = try ShellCommand(command: command, timeout: timeout).run(input: Data(hex.utf8))
        } catch is ShellCommand.TimedOut {
            throw KDBXError.challengeResponseFailed("the command `\(command)` did not finish within \(Int(timeout)) s; stopped")
        } catch is ShellCommand.PrintedTooMuch {
            throw KDBXError.challengeResponseFailed("the command `\(command)` printed more than \(ShellCommand.outputLimit / 1024) KiB; stopped")
        }
        guard status == 0 else { throw KDBXError.challengeResponseFailed("the command `\(command)` failed (exit status \(status))") }
        let text = String(decoding: output, as: UTF8.self).split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        guard let response = Data(hexDigits: text.trimmingCharacters(in: .whitespaces)), response.count == 20 else {
            throw KDBXError.challengeResponseFailed("the command `\(command)` did not print a 20-byte response in hex")
        }
        return response
    }
}

extension Data {
    /// The bytes of `digits` (pairs of hex digits); nil when it is anything else.
    init?(hexDigits digits: String) {
        guard digits.count % 2 == 0, digits.allSatisfy(\.isHexDigit), digits.allSatisfy(\.isASCII) else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var index = digits.startIndex
        while index < digits.endIndex {
            let next = digits.index(index, offsetBy: 2)
            guard let byte = UInt8(digits[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        self.init(bytes)
    }
}

/// A YubiKey's HMAC-SHA1 challenge-response slot over USB (ykpers), as KeePassXC uses it:
/// `--yubikey SLOT[:SERIAL]`. The key may ask for a touch.
public struct YubiKeyChallengeResponse: ChallengeResponse {
    public let slot: Int
    public let serial: UInt32?

    /// `SLOT[:SERIAL]`: slot 1 or 2, optionally the key's serial number.
    public init(parsing text: String) throws(KDBXError) {
        let parts = text.split(separator: ":", maxSplits: 1).map(String.init)
        guard let slot = parts.first.flatMap(Int.init), slot == 1 || slot == 2 else {
            throw .challengeResponseFailed("--yubikey takes SLOT[:SERIAL] with slot 1 or 2")
        }
        self.slot = slot
        if parts.count == 2 {
            guard let serial = UInt32(parts[1]) else { throw .challengeResponseFailed("--yubikey: the serial is a number") }
            self.serial = serial
        } else {
            serial = nil
        }
    }

    public func response(to challenge: Data) throws -> Data {
        try YubiKeyUSB.shared.response(slot: slot, serial: serial, challenge: challenge)
    }
}

internal import Foundation
internal import MyPassSync
internal import MyPassCore
internal import MyPassCrypto

/// `mypass-sync totp VAULT ENTRY [--time UNIX] [--json]`: the entry's current one-time password.
struct TOTPCommand: Command {
    let name = "totp"
    let summary = "Print an entry's time-based one-time password (otpauth URI, KeePassXC or KeePass fields)."
    let usage = "mypass-sync totp <vault> <entry-path> [--time <unix-seconds>] [--json] [credentials]"
    let time = Option<Int64>.number("--time", valueName: "unix-seconds", help: "The code at this moment instead of now.", in: 0...Int64.max)
    let json = Flag("--json", help: "Print {\"code\", \"secondsRemaining\", \"period\", \"algorithm\"}.")
    let credentials = CredentialOptions()

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        let parsed = try parse(arguments, count: 2...2)
        let moment = parsed[time].map { Date(timeIntervalSince1970: TimeInterval($0)) } ?? Date()
        let vault = try credentials.unlockForReading(parsed, path: parsed.positionals[0], state: nil, command: name).vault
        let entry = try requireEntry(parsed.positionals[1], vault, name)
        let configuration: TOTP
        do {
            guard let found = try TOTP.configuration(of: entry) else {
                throw CommandLineError.usage(message: "\(parsed.positionals[1]) has no one-time password configured", command: name)
            }
            configuration = found
        } catch let error as TOTPError {
            throw CommandLineError.usage(message: "\(parsed.positionals[1]): \(error)", command: name)
        }
        let code = try configuration.code(at: moment)
        let remaining = configuration.secondsRemaining(at: moment)
        if parsed[json] {
            output.print(try JSONText.encode(TOTPOutput(code: code, secondsRemaining: remaining, period: configuration.period,
                                                        algorithm: configuration.algorithm.rawValue)))
        } else {
            output.print("\(code)  (\(remaining) s left)")
        }
        return .success
    }
}

private struct TOTPOutput: Encodable {
    let schema = 1
    let code: String
    let secondsRemaining: Int
    let period: Int
    let algorithm: String
}

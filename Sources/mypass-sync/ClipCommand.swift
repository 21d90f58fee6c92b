internal import Dispatch
internal import Foundation
internal import MyPassCore
internal import MyPassSync

/// `mypass-sync clip VAULT ENTRY [TIMEOUT] [-a NAME] [--totp]`.
struct ClipCommand: Command {
    let name = "clip"
    let summary = "Copy an entry's password (or a field, or its TOTP code) to the clipboard; cleared after 30 s."
    let usage = "mypass-sync clip <vault> <entry-path> [<timeout-seconds>] [-a <name> | --totp] [credentials]"
    let notes = """
        Uses wl-copy under Wayland, else xclip or xsel under X11 (exit 7 with the reason when there is no \
        clipboard). Waits TIMEOUT seconds (default 30; 0: never clear), then clears the clipboard only if it still \
        holds the copied value. Ctrl-C or SIGTERM during the wait clears it at once.
        """
    let attribute = Option<String>("--attribute", "-a", valueName: "name", help: "Copy this field instead of the password.")
    let totp = Flag("--totp", "-t", help: "Copy the current TOTP code instead of the password.")
    let credentials = CredentialOptions()
    let stateOptions = StateOptions()

    /// The default wait before the clipboard is cleared.
    static let defaultTimeout = 30

    func run(arguments: [String], output: inout StandardStreams) throws -> ExitCode {
        let parsed = try parse(arguments, count: 2...3)
        let timeout = try parsed.positionals.count > 2 ? Self.timeout(parsed.positionals[2], command: name) : Self.defaultTimeout
        guard parsed[attribute] == nil || !parsed[totp] else {
            throw CommandLineError.usage(message: "--attribute and --totp exclude each other", command: name)
        }
        let clipboard = try SystemClipboard.detect()  // before the password: no clipboard, no unlock
        let vault = try credentials.unlockForReading(parsed, path: parsed.positionals[0], state: stateOptions.state(parsed),
                                                             command: name).vault
        let entry = try requireEntry(parsed.positionals[1], vault, name)
        let (value, what) = try Self.value(of: entry, attribute: parsed[attribute], totp: parsed[totp], path: parsed.positionals[1], command: name)
        try clipboard.copy(value)
        output.print("\(what) of \(parsed.positionals[1].terminalSafe) copied to the clipboard (\(clipboard.tool.rawValue))")
        guard timeout > 0 else { return .success }
        output.print("Clearing the clipboard in \(timeout) seconds... (Ctrl-C clears it now)")
        let interrupted = DispatchSemaphore(value: 0)
        let signals = ShutdownSignals { interrupted.signal() }
        _ = interrupted.wait(timeout: .now() + .seconds(timeout))
        signals.cancel()
        output.print(try clipboard.clear(ifStillHolding: value) ? "Clipboard cleared" : "The clipboard holds something else now: left as it is")
        return .success
    }

    /// What to copy, and how to name it in the message.
    private static func value(of entry: Entry, attribute: String?, totp: Bool, path: String, command: String) throws -> (String, String) {
        if totp {
            guard let configuration = try? TOTP.configuration(of: entry) else {
                throw CommandLineError.usage(message: "\(path) has no usable one-time password configured", command: command)
            }
            return (try configuration.code(at: Date()), "The TOTP code")
        }
        let name = attribute ?? EntryField.password
        guard let field = entry.field(name) else { throw CommandLineError.usage(message: "\(path) has no field \(name)", command: command) }
        return (field.text, "The field \(name.terminalSafe)")
    }

    private static func timeout(_ text: String, command: String) throws -> Int {
        guard let seconds = Int(text), (0...86_400).contains(seconds) else {
            throw CommandLineError.usage(message: "the timeout must be 0 to 86400 seconds, not \(text)", command: command)
        }
        return seconds
    }
}

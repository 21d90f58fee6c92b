public import Foundation

/// `keepassxc-cli`, with the password on standard input and every run bounded in time.
public enum KeePassXCCLI {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// `keepassxc-cli ARGUMENTS` with `password` and then `input` on standard input; its standard
    /// output. Throws when it fails or runs longer than `timeout` seconds (a loaded machine is slow).
    @discardableResult
    public static func run(_ arguments: [String], password: String, input: String = "", timeout: Double = 120) throws -> String {
        let outcome = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), ["keepassxc-cli"] + arguments,
                                            input: Data((password + "\n" + input).utf8),
                                            environment: ["QT_QPA_PLATFORM": "offscreen"], timeout: timeout)
        guard outcome.status == 0 else {
            throw Failure(description: "keepassxc-cli \(arguments.first ?? "") exited \(outcome.status): \(outcome.standardError.suffix(2000))")
        }
        return outcome.output
    }

    /// A new vault at `path` protected by `password` (AES-KDF tuned to 100 ms, what `db-create -t` gives).
    public static func create(_ path: URL, password: String) throws {
        try run(["db-create", "-q", "-p", "-t", "100", path.path], password: password, input: password + "\n")
    }

    /// Every entry and group path in `vault`, as `ls -R -f` prints them ("Shared/", "Shared/Alpha").
    public static func paths(_ vault: URL, password: String) throws -> [String] {
        try run(["ls", "-q", "-R", "-f", vault.path], password: password).split(separator: "\n").map(String.init)
    }

    /// The attributes of the entry at `entry` ("Shared/Alpha"), protected ones shown (`show -s`).
    public static func show(_ vault: URL, password: String, entry: String) throws -> [String: String] {
        let text = try run(["show", "-q", "-s", vault.path, entry], password: password)
        var attributes: [String: String] = [:]
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            guard let colon = line.firstIndex(of: ":") else { continue }
            attributes[String(line[..<colon])] = String(line[line.index(after: colon)...].dropFirst())
        }
        return attributes
    }
}

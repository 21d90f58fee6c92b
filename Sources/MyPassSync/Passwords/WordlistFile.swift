internal import Foundation
internal import SyncFiles
internal import SyncState
internal import SyncCommit
internal import SyncWatch
internal import SyncRemote
public import MyPassCore

extension Wordlist {
    /// EFF's large wordlist (7,776 words, five dice) as Debian ships it in the `diceware` package: the
    /// list KeePassXC's passphrase generator uses by default, from a package kept by the distribution.
    public static let defaultPath = "/usr/lib/python3/dist-packages/diceware/wordlists/wordlist_en_eff.txt"

    /// Largest wordlist file read (a list of a million words is far below it).
    static let maximumFileSize: Int64 = 64 << 20

    /// The wordlist in the file at `path` (nil: `defaultPath`), UTF-8, one word per line or dice digits
    /// and a word per line.
    public static func read(from path: String? = nil) throws -> Wordlist {
        let file = path ?? defaultPath
        if path == nil && SystemCalls.status(atPath: file, on: .real) == nil {
            throw VaultEditError.invalidName("\(file): EFF's wordlist is missing: install Debian's diceware package or give a wordlist with -w")
        }
        let bytes = try FileReading.readAll(atPath: file, on: .real, limit: maximumFileSize)
        guard let text = String(data: bytes, encoding: .utf8) else {
            throw VaultEditError.invalidName("\(file): the wordlist is not UTF-8 text")
        }
        return try Wordlist(text: text)
    }
}

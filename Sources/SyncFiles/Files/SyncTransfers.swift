public import Foundation
#if canImport(Glibc)
internal import Glibc
#endif

/// Files a sync engine is still transferring into the folder of a vault: it downloads into a
/// temporary name beside the target and renames it over the target when complete. While such a file
/// of the vault or of one of its conflict copies is being written, reading the vault sees a version
/// about to be replaced, and writing it makes the engine's rename fail ("file modified but not
/// rescanned") or a new conflict. Temporary names:
/// - Syncthing: `.syncthing.NAME.tmp` (`~syncthing~NAME.tmp` on Windows);
/// - Nextcloud and ownCloud desktop clients: `.NAME.~RANDOM`;
/// - rclone from 1.63 (its copies and bisync's): `NAME.XXXXXXXX.partial`, eight hex digits (seen with
///   1.75; Debian 12's 1.60 writes the file in place under its own name, which a check then finds
///   half written and retries);
/// - Dropbox downloads into its own `.dropbox.cache` folder and renames from there: nothing to see.
/// A temporary file untouched for `staleAfter` seconds is an interrupted transfer the engine left
/// behind (Syncthing keeps them for a day to resume), not one in progress.
public enum SyncTransfers {
    /// A temporary file that has not changed for this long belongs to no transfer in progress.
    public static let staleAfter: TimeInterval = 15

    /// The temporary files of transfers in progress into `vaultPath` or its conflict copies.
    public static func inProgress(for vaultPath: String, now: Date = Date(), staleAfter: TimeInterval = staleAfter) -> [String] {
        guard let (directory, vaultName) = try? DirectoryHandle.parent(of: vaultPath) else { return [] }
        return directory.names().filter { name in
            guard let target = targetName(ofTemporary: name),
                  target == vaultName || ConflictCopies.engine(ofName: target, forVaultNamed: vaultName) != nil,
                  let status = directory.status(of: name) else { return false }
            let modified = status.modifiedSeconds
            return now.timeIntervalSince1970 - modified < staleAfter
        }
    }

    /// Waits while a transfer into `vaultPath` or its copies is in progress, at most `limit` seconds.
    /// Returns whether none is in progress now.
    @discardableResult
    public static func waitWhileInProgress(for vaultPath: String, limit: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(limit)
        while !inProgress(for: vaultPath).isEmpty {
            guard Date() < deadline else { return false }
            usleep(100_000)
        }
        return true
    }

    /// The name a sync engine's temporary file `name` will be renamed to, if it is one.
    public static func targetName(ofTemporary name: String) -> String? {
        for (prefix, suffix) in [(".syncthing.", ".tmp"), ("~syncthing~", ".tmp")]
        where name.hasPrefix(prefix) && name.hasSuffix(suffix) && name.count > prefix.count + suffix.count {
            return String(name.dropFirst(prefix.count).dropLast(suffix.count))
        }
        // rclone: NAME + "." + eight hex digits + ".partial".
        if name.hasSuffix(".partial") {
            let stem = name.dropLast(".partial".count)
            if let dot = stem.lastIndex(of: "."), stem.distance(from: dot, to: stem.endIndex) == 9, dot > stem.startIndex,
               stem[stem.index(after: dot)...].allSatisfy(\.isHexDigit) {
                return String(stem[..<dot])
            }
        }
        // Nextcloud / ownCloud: "." + NAME + ".~" + random letters and digits.
        if name.hasPrefix("."), let marker = name.range(of: ".~", options: .backwards), marker.lowerBound > name.index(after: name.startIndex) {
            let random = name[marker.upperBound...]
            if !random.isEmpty && random.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) {
                return String(name[name.index(after: name.startIndex)..<marker.lowerBound])
            }
        }
        return nil
    }
}

public import Foundation

/// Copies of a vault that sync engines leave beside it when two devices changed it at once.
public enum ConflictCopies {
    /// The kind of sync engine that named a copy.
    public enum Engine: String, Sendable, Codable {
        case syncthing, dropbox, nextcloud
    }

    /// One conflict copy.
    public struct Copy: Sendable, Codable, Equatable {
        public let path: String
        public let engine: Engine
    }

    /// The conflict copies of `vaultPath` in its directory:
    /// `NAME.sync-conflict-YYYYMMDD-HHMMSS-DEVICE.kdbx` (Syncthing),
    /// `NAME (… conflicted copy …).kdbx` (Dropbox), `NAME (conflicted copy …).kdbx` (Nextcloud / ownCloud).
    public static func find(for vaultPath: String) -> [Copy] {
        let directory = (vaultPath as NSString).deletingLastPathComponent.isEmpty ? "." : (vaultPath as NSString).deletingLastPathComponent
        let file = (vaultPath as NSString).lastPathComponent
        let stem = (file as NSString).deletingPathExtension
        let suffix = (file as NSString).pathExtension
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [] }
        var copies: [Copy] = []
        for name in names.sorted() where name != file && (name as NSString).pathExtension == suffix {
            let base = (name as NSString).deletingPathExtension
            let engine: Engine?
            if base.hasPrefix(stem + ".sync-conflict-") {
                engine = .syncthing
            } else if base.hasPrefix(stem + " (") && base.hasSuffix(")") && base.contains("conflicted copy") {
                engine = base.hasPrefix(stem + " (conflicted copy") ? .nextcloud : .dropbox
            } else {
                engine = nil
            }
            if let engine { copies.append(Copy(path: directory + "/" + name, engine: engine)) }
        }
        return copies
    }
}

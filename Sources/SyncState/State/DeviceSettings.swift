internal import Foundation
public import SyncFiles
#if canImport(Glibc)
internal import Glibc
#endif

/// This device's settings for mypass-sync, read from `$XDG_CONFIG_HOME/mypass-sync/config.json`
/// (else `~/.config/mypass-sync/config.json`), e.g. `{"backups": true, "rcloneConflictSuffix": "cloud,local"}`.
/// A missing file means defaults.
public struct DeviceSettings: Codable, Sendable, Equatable {
    /// Keep the replaced version as `<vault>.bak` on every save (the `--backup` flag does it once).
    public var backups: Bool = false
    /// Draw a new KDF salt on every save (`SyncSession.rotatesKDFSalt`); false keeps the file's salt.
    public var rotateKDFSalt: Bool = true
    /// The value this device gives rclone bisync's `--conflict-suffix` (`S` or `S1,S2`), so that its
    /// copies are recognised; nil: rclone's default names.
    public var rcloneConflictSuffix: String?

    /// Settings with these values (the defaults are what a missing file means).
    public init(backups: Bool = false, rotateKDFSalt: Bool = true, rcloneConflictSuffix: String? = nil) {
        self.backups = backups
        self.rotateKDFSalt = rotateKDFSalt
        self.rcloneConflictSuffix = rcloneConflictSuffix
    }

    /// How this device's sync engines name conflict copies.
    public var copyNaming: ConflictCopies.Naming {
        ConflictCopies.Naming(rcloneSuffixes: rcloneConflictSuffix.flatMap(ConflictCopies.Naming.rcloneSuffixes(fromFlag:)) ?? [])
    }

    private enum CodingKeys: String, CodingKey { case backups, rotateKDFSalt, rcloneConflictSuffix }

    /// Keys left out of the file keep their defaults; an rclone suffix that is not one is refused.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        backups = try container.decodeIfPresent(Bool.self, forKey: .backups) ?? false
        rotateKDFSalt = try container.decodeIfPresent(Bool.self, forKey: .rotateKDFSalt) ?? true
        rcloneConflictSuffix = try container.decodeIfPresent(String.self, forKey: .rcloneConflictSuffix)
        if let suffix = rcloneConflictSuffix, ConflictCopies.Naming.rcloneSuffixes(fromFlag: suffix) == nil {
            throw DecodingError.dataCorruptedError(forKey: .rcloneConflictSuffix, in: container,
                                                   debugDescription: "rcloneConflictSuffix must be S or S1,S2 (as given to rclone's --conflict-suffix)")
        }
    }

    /// Where the settings file is.
    public static var path: String {
        let environment = ProcessInfo.processInfo.environment
        let base = environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? ((environment["HOME"] ?? NSHomeDirectory()) + "/.config")
        return base + "/mypass-sync/config.json"
    }

    /// The settings in effect; an unreadable or malformed file is reported, not guessed at.
    public static func load(on fileSystem: FileSystem = .real) throws(FileError) -> DeviceSettings {
        let data: Data
        do {
            data = try FileReading.readAll(atPath: path, on: fileSystem)
        } catch .notFound {
            return DeviceSettings()
        }
        do {
            return try JSONDecoder().decode(DeviceSettings.self, from: data)
        } catch {
            let reason = (error as? DecodingError).flatMap { error -> String? in
                if case .dataCorrupted(let context) = error { return context.debugDescription }
                return nil
            }
            throw .system(operation: .readSettings, path: path, errno: EINVAL,
                          message: reason ?? "not a valid settings file (expected JSON like {\"backups\": true})")
        }
    }
}

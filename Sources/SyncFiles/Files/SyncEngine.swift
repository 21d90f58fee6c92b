internal import Foundation

/// A sync engine as this project knows it, in one value: how it names the conflict copies it leaves
/// beside a file, how it names the temporary file of a transfer in progress, and whether it renames
/// both versions aside on a conflict. `ConflictCopies` and `SyncTransfers` ask `all`; a new engine
/// is one new value in `all` and its tests.
public struct SyncEngine: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Its name in reports and JSON (`syncthing`, `dropbox`, …).
    public let name: String
    /// Whether the engine renames both versions aside on a conflict and leaves no vault (rclone
    /// bisync without `--conflict-resolve`): the vault is then rebuilt from the copies.
    public let renamesBothVersions: Bool
    /// Whether `name` is a copy this engine made of the file `name.vaultName`.
    private let namesCopy: @Sendable (CopyName, ConflictCopies.Naming) -> Bool
    /// The file a temporary file of this engine's becomes, if `name` is one.
    private let temporaryTarget: @Sendable (String) -> String?

    private init(
        _ name: String, renamesBothVersions: Bool = false, temporaryTarget: @escaping @Sendable (String) -> String? = { _ in nil },
        namesCopy: @escaping @Sendable (CopyName, ConflictCopies.Naming) -> Bool
    ) {
        self.name = name
        self.renamesBothVersions = renamesBothVersions
        self.temporaryTarget = temporaryTarget
        self.namesCopy = namesCopy
    }

    /// A file name seen beside a vault, taken apart the way engines build copy names.
    struct CopyName {
        /// What follows the vault's whole name (`.conflict1` in `vault.kdbx.conflict1`), if the name starts with it.
        let afterVaultName: Substring?
        /// What follows the vault's stem when the extension is kept at the end (`.sync-conflict-…` in
        /// `vault.sync-conflict-….kdbx`), if it has that shape.
        let afterStem: Substring?

        init(_ name: String, vaultName: String) {
            afterVaultName = name.hasPrefix(vaultName + ".") ? name.dropFirst(vaultName.count) : nil
            let stem = (vaultName as NSString).deletingPathExtension
            let base = (name as NSString).deletingPathExtension
            let sameExtension = PathText.pathExtension(of: name) == PathText.pathExtension(of: vaultName)
            afterStem = sameExtension && base.hasPrefix(stem) && base.count > stem.count ? Substring(base.dropFirst(stem.count)) : nil
        }

        /// `afterStem` when it is ` (INNER)`: INNER.
        var parenthesised: Substring? {
            guard let rest = afterStem, rest.hasPrefix(" ("), rest.hasSuffix(")") else { return nil }
            return rest.dropFirst(2).dropLast()
        }
    }

    public var description: String { name }

    public static func == (a: SyncEngine, b: SyncEngine) -> Bool { a.name == b.name }
    public func hash(into hasher: inout Hasher) { hasher.combine(name) }

    public init(from decoder: any Decoder) throws {
        let name = try decoder.singleValueContainer().decode(String.self)
        guard let engine = Self.all.first(where: { $0.name == name }) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "no sync engine is called \(name)"))
        }
        self = engine
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(name)
    }

    /// The engine's name (as `rawValue` of the names in JSON).
    public var rawValue: String { name }

    /// Every engine, in the order names are tried (the first that recognises a name named it).
    public static let all: [SyncEngine] = [rclone, syncthing, nextcloud, dropbox, seafile, unison, googleDrive, pcloud, resilio, onedriveLinux, onedrive]

    /// Which engine named `name` as a conflict copy of the vault file `vaultName`, if any.
    static func engine(namingCopy name: String, ofVaultNamed vaultName: String, naming: ConflictCopies.Naming) -> SyncEngine? {
        guard name != vaultName else { return nil }
        let parts = CopyName(name, vaultName: vaultName)
        // A name that continues the vault's whole name is rclone's or nobody's.
        if parts.afterVaultName != nil { return rclone.namesCopy(parts, naming) ? rclone : nil }
        return all.first { $0.namesCopy(parts, naming) }
    }

    /// The name a sync engine's temporary file `name` will be renamed to, if it is one.
    static func target(ofTemporary name: String) -> String? {
        all.lazy.compactMap { $0.temporaryTarget(name) }.first
    }

    // MARK: - The engines

    /// Syncthing: copies `NAME.sync-conflict-YYYYMMDD-HHMMSS-DEVICE.kdbx`; transfers into
    /// `.syncthing.NAME.tmp` (`~syncthing~NAME.tmp` on Windows).
    public static let syncthing = SyncEngine("syncthing", temporaryTarget: { name in
        for (prefix, suffix) in [(".syncthing.", ".tmp"), ("~syncthing~", ".tmp")]
        where name.hasPrefix(prefix) && name.hasSuffix(suffix) && name.count > prefix.count + suffix.count {
            return String(name.dropFirst(prefix.count).dropLast(suffix.count))
        }
        return nil
    }) { name, _ in name.afterStem?.hasPrefix(".sync-conflict-") == true }

    /// Nextcloud and ownCloud desktop clients: copies `NAME (conflicted copy …).kdbx`; transfers into
    /// `.NAME.~RANDOM`.
    public static let nextcloud = SyncEngine("nextcloud", temporaryTarget: { name in
        guard name.hasPrefix("."), let marker = name.range(of: ".~", options: .backwards),
              marker.lowerBound > name.index(after: name.startIndex) else { return nil }
        let random = name[marker.upperBound...]
        guard !random.isEmpty && random.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else { return nil }
        return String(name[name.index(after: name.startIndex)..<marker.lowerBound])
    }) { name, _ in name.parenthesised?.hasPrefix("conflicted copy") == true }

    /// Dropbox: copies `NAME (… conflicted copy …).kdbx`; it downloads into its own `.dropbox.cache`
    /// folder, so no temporary file is seen beside the vault.
    public static let dropbox = SyncEngine("dropbox") { name, _ in name.parenthesised?.contains("conflicted copy") == true }

    /// OneDrive's "keep both": `NAME-COMPUTERNAME.kdbx` or `NAME-COMPUTERNAME-N.kdbx` (a Windows
    /// computer name, upper case, up to 15 characters).
    public static let onedrive = SyncEngine("onedrive") { name, _ in
        guard let rest = name.afterStem, rest.hasPrefix("-") else { return false }
        return isWindowsComputerName(rest.dropFirst())
    }

    /// The OneDrive client for Linux (abraunegg/onedrive): `NAME-HOST-safeBackup-NNNN`.
    public static let onedriveLinux = SyncEngine("onedriveLinux") { name, _ in
        guard let rest = name.afterStem, rest.hasPrefix("-"), let backup = rest.range(of: "-safeBackup-") else { return false }
        let number = rest[backup.upperBound...]
        return number.count == 4 && number.allSatisfy(\.isASCIIDigit)
    }

    /// Resilio Sync: `NAME.Conflict`, `NAME.ConflictN`.
    public static let resilio = SyncEngine("resilio") { name, _ in
        guard let rest = name.afterStem, rest.hasPrefix(".Conflict") else { return false }
        return rest.dropFirst(".Conflict".count).drop { $0 == " " }.allSatisfy(\.isASCIIDigit)
    }

    /// Seafile: `NAME (SFConflict USER DATE)`.
    public static let seafile = SyncEngine("seafile") { name, _ in name.parenthesised?.hasPrefix("SFConflict ") == true }

    /// pCloud: `NAME [conflicted]`, `NAME.conflicted`.
    public static let pcloud = SyncEngine("pcloud") { name, _ in name.afterStem == " [conflicted]" || name.afterStem == ".conflicted" }

    /// Google Drive's duplicates: `NAME (N)`.
    public static let googleDrive = SyncEngine("googleDrive") { name, _ in
        guard let inner = name.parenthesised else { return false }
        return !inner.isEmpty && inner.allSatisfy(\.isASCIIDigit)
    }

    /// Unison's copyonconflict: `NAME (conflict_on_DATE)`, `NAME (conflict #N_on_DATE)`.
    public static let unison = SyncEngine("unison") { name, _ in
        guard let inner = name.parenthesised else { return false }
        return inner.hasPrefix("conflict") && inner.contains("_on_")
    }

    /// rclone bisync: copies `NAME.kdbx..path1` / `..path2` (1.60), `NAME.kdbx.conflictN`, `.path1` /
    /// `.path2` (1.66+), `NAME.conflictN.kdbx` (`--suffix-keep-extension`), and the suffixes of
    /// `Naming.rcloneSuffixes`; without `--conflict-resolve` both versions are renamed aside. From
    /// 1.63 (its copies and bisync's) transfers go into `NAME.XXXXXXXX.partial`, eight hex digits
    /// (Debian 12's 1.60 writes in place under the file's own name, which a check then finds half
    /// written and retries).
    public static let rclone = SyncEngine("rclone", renamesBothVersions: true, temporaryTarget: { name in
        guard name.hasSuffix(".partial") else { return nil }
        let stem = name.dropLast(".partial".count)
        guard let dot = stem.lastIndex(of: "."), stem.distance(from: dot, to: stem.endIndex) == 9, dot > stem.startIndex,
              stem[stem.index(after: dot)...].allSatisfy(\.isHexDigit) else { return nil }
        return String(stem[..<dot])
    }) { name, naming in
        if let suffix = name.afterVaultName { return naming.isRcloneSuffix(suffix) }
        return name.afterStem.map(naming.isRcloneSuffix) ?? false
    }

    /// `HOST` or `HOST-N`: upper-case letters, digits and hyphens, 1-15 characters, not only digits.
    static func isWindowsComputerName(_ text: Substring) -> Bool {
        var host = text
        if let dash = host.lastIndex(of: "-"), !host[host.index(after: dash)...].isEmpty,
           host[host.index(after: dash)...].allSatisfy(\.isASCIIDigit) {
            host = host[..<dash]
        }
        return (1...15).contains(host.count) && !host.allSatisfy(\.isASCIIDigit)
            && host.allSatisfy { ("A"..."Z").contains($0) || $0.isASCIIDigit || $0 == "-" }
            && host.first != "-"
    }
}

extension Character {
    /// `0` to `9` only (not other scripts' digits).
    var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}

internal import Foundation
#if canImport(Glibc)
internal import Glibc
#endif

/// Copies of a vault that sync engines leave beside it when two devices changed it at once.
public enum ConflictCopies {
    /// The kind of sync engine that named a copy.
    public enum Engine: String, Sendable, Codable {
        case syncthing, dropbox, nextcloud, onedrive
        /// The OneDrive client for Linux (abraunegg/onedrive): `NAME-HOST-safeBackup-NNNN`.
        case onedriveLinux
        /// Resilio Sync: `NAME.Conflict`, `NAME.ConflictN`.
        case resilio
        /// Seafile: `NAME (SFConflict USER DATE)`.
        case seafile
        /// pCloud: `NAME [conflicted]`, `NAME.conflicted`.
        case pcloud
        /// Google Drive's duplicates: `NAME (N)`.
        case googleDrive
        /// Unison's copyonconflict: `NAME (conflict_on_DATE)`, `NAME (conflict #N_on_DATE)`.
        case unison
        /// rclone bisync: `NAME.kdbx..path1` / `..path2` (1.60), `NAME.kdbx.conflictN`, `.path1` / `.path2` (1.66+).
        case rclone
    }

    /// One conflict copy.
    public struct Copy: Sendable, Codable, Equatable {
        /// The copy's path.
        public let path: String
        /// The sync engine whose naming it follows.
        public let engine: Engine
        /// Its name in the folder.
        public var name: String { (path as NSString).lastPathComponent }

        /// The copy at `path`, named as `engine` names copies.
        package init(path: String, engine: Engine) {
            self.path = path
            self.engine = engine
        }
    }

    /// The conflict copies of `vaultPath` in its directory:
    /// `NAME.sync-conflict-YYYYMMDD-HHMMSS-DEVICE.kdbx` (Syncthing),
    /// `NAME (… conflicted copy …).kdbx` (Dropbox), `NAME (conflicted copy …).kdbx` (Nextcloud / ownCloud),
    /// `NAME-COMPUTERNAME.kdbx` or `NAME-COMPUTERNAME-N.kdbx` (OneDrive's "keep both": a Windows computer
    /// name, upper case, up to 15 characters), and the names of `Engine`'s other cases. A name of
    /// such a shape can also be a user's own file (`vault (1).kdbx`), so folding merges a copy only
    /// when it is the same database (same root group) and opens with the vault's credentials.
    public static func find(for vaultPath: String) -> [Copy] {
        guard let (directory, name) = try? DirectoryHandle.parent(of: vaultPath) else { return [] }
        return find(in: directory, forVaultNamed: name)
    }

    /// The conflict copies of the vault named `vaultName` in the open `directory`.
    public static func find(in directory: DirectoryHandle, forVaultNamed vaultName: String) -> [Copy] {
        directory.names().compactMap { name in
            engine(ofName: name, forVaultNamed: vaultName).map { Copy(path: directory.pathOf(name), engine: $0) }
        }
    }

    /// A vault found in a folder (`conflicts FOLDER`).
    public struct FolderVault: Sendable, Equatable {
        /// The vault's path.
        public let path: String
        /// False for a symlink or anything else that is not a regular file: whoever can write into
        /// the folder planted it, the user did not name it, so it is never followed.
        public let isRegularFile: Bool
    }

    /// The vaults in `directory`: every `NAME.kdbx` that is not a conflict copy of another one there.
    public static func vaults(in directory: DirectoryHandle) -> [FolderVault] {
        let names = directory.names().filter { $0.hasSuffix(".kdbx") }
        let copies = Set(names.flatMap { vault in names.filter { engine(ofName: $0, forVaultNamed: vault) != nil } })
        return names.filter { !copies.contains($0) }.map { name in
            let isRegular = directory.status(of: name)?.isRegularFile ?? false
            return FolderVault(path: directory.pathOf(name), isRegularFile: isRegular)
        }
    }

    /// Which engine named `name` as a conflict copy of the vault file `vaultName`, if any.
    public static func engine(ofName name: String, forVaultNamed vaultName: String) -> Engine? {
        let stem = (vaultName as NSString).deletingPathExtension
        guard name != vaultName else { return nil }
        // rclone puts its suffix after the extension.
        if name.hasPrefix(vaultName + ".") {
            let suffix = String(name.dropFirst(vaultName.count))
            if [".path1", ".path2", "..path1", "..path2"].contains(suffix) { return .rclone }
            if suffix.hasPrefix(".conflict"), let number = Int(suffix.dropFirst(".conflict".count)), number > 0 { return .rclone }
            return nil
        }
        guard (name as NSString).pathExtension == (vaultName as NSString).pathExtension else { return nil }
        let base = (name as NSString).deletingPathExtension
        guard base.hasPrefix(stem), base.count > stem.count else { return nil }
        let rest = String(base.dropFirst(stem.count))
        if rest.hasPrefix(".sync-conflict-") { return .syncthing }
        if rest.hasPrefix(" (") && rest.hasSuffix(")") {
            let inner = rest.dropFirst(2).dropLast()
            if inner.contains("conflicted copy") { return inner.hasPrefix("conflicted copy") ? .nextcloud : .dropbox }
            if inner.hasPrefix("SFConflict ") { return .seafile }
            if inner.hasPrefix("conflict") && inner.contains("_on_") { return .unison }
            if !inner.isEmpty && inner.allSatisfy(\.isASCIIDigitCharacter) { return .googleDrive }
            return nil
        }
        if rest == " [conflicted]" || rest == ".conflicted" { return .pcloud }
        if rest.hasPrefix(".Conflict") {
            let number = rest.dropFirst(".Conflict".count).drop { $0 == " " }
            if number.allSatisfy(\.isASCIIDigitCharacter) { return .resilio }
        }
        if rest.hasPrefix("-"), let backup = rest.range(of: "-safeBackup-"),
           rest[backup.upperBound...].count == 4, rest[backup.upperBound...].allSatisfy(\.isASCIIDigitCharacter) {
            return .onedriveLinux
        }
        if rest.hasPrefix("-"), isWindowsComputerName(String(rest.dropFirst())) { return .onedrive }
        return nil
    }

    /// `HOST` or `HOST-N`: upper-case letters, digits and hyphens, 1-15 characters, not only digits.
    static func isWindowsComputerName(_ text: String) -> Bool {
        var host = Substring(text)
        if let dash = host.lastIndex(of: "-"), !host[host.index(after: dash)...].isEmpty,
           host[host.index(after: dash)...].allSatisfy(\.isASCIIDigitCharacter) {
            host = host[..<dash]
        }
        return (1...15).contains(host.count) && !host.allSatisfy(\.isASCIIDigitCharacter)
            && host.allSatisfy { ("A"..."Z").contains($0) || $0.isASCIIDigitCharacter || $0 == "-" }
            && host.first != "-"
    }
}

private extension Character {
    var isASCIIDigitCharacter: Bool { ("0"..."9").contains(self) }
}

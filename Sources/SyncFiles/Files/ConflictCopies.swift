internal import Foundation
#if canImport(Glibc)
internal import Glibc
#endif

/// Copies of a vault that sync engines leave beside it when two devices changed it at once.
public enum ConflictCopies {
    /// The sync engine that named a copy (`SyncEngine`: its names, temporaries and rules).
    public typealias Engine = SyncEngine

    /// Names this device's sync engines give copies beyond their defaults.
    public struct Naming: Sendable, Equatable {
        /// The suffixes given to rclone bisync's `--conflict-suffix` (without rclone's leading dot;
        /// rclone's own `conflict`, `path` and `.path` are always known).
        public var rcloneSuffixes: [String]

        /// Naming with these rclone suffixes.
        public init(rcloneSuffixes: [String] = []) {
            self.rcloneSuffixes = rcloneSuffixes
        }

        /// The engines' default names only.
        public static let standard = Naming()

        /// The suffixes of an rclone `--conflict-suffix` value as written on its command line
        /// (`S` or `S1,S2`); nil when it is not one (empty, more than two, or holding a `/`).
        public static func rcloneSuffixes(fromFlag value: String) -> [String]? {
            let parts = value.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard (1...2).contains(parts.count), parts.allSatisfy({ !$0.isEmpty && !$0.contains("/") }) else { return nil }
            return parts
        }

        /// Whether `suffix` (what follows `NAME.kdbx`, or `NAME` with the extension kept after it) is
        /// one rclone bisync gives a conflict copy: `.conflictN`, `.path1`/`.path2`, `..path1`/`..path2`,
        /// or `.S`/`.SN` for a configured suffix S.
        func isRcloneSuffix(_ suffix: Substring) -> Bool {
            guard suffix.hasPrefix(".") else { return false }
            let body = suffix.dropFirst()
            if body == "path1" || body == "path2" || body == ".path1" || body == ".path2" { return true }
            if body.hasPrefix("conflict"), isCounter(body.dropFirst("conflict".count)) { return true }
            return rcloneSuffixes.contains { configured in
                guard body.hasPrefix(configured) else { return false }
                let rest = body.dropFirst(configured.count)
                return rest.isEmpty || isCounter(rest)
            }
        }

        /// `1`, `2`, …: the number rclone appends (never 0, never signed).
        private func isCounter(_ text: Substring) -> Bool {
            !text.isEmpty && text.allSatisfy(\.isASCIIDigit) && (Int(text) ?? 0) > 0
        }
    }

    /// One conflict copy.
    public struct Copy: Sendable, Codable, Equatable {
        /// The copy's path.
        public let path: String
        /// The sync engine whose naming it follows.
        public let engine: Engine
        /// Its name in the folder.
        public var name: String { PathText.name(of: path) }

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
    /// name, upper case, up to 15 characters), and the names of the other engines (`SyncEngine.all`). A name of
    /// such a shape can also be a user's own file (`vault (1).kdbx`), so folding merges a copy only
    /// when it is the same database (same root group) and opens with the vault's credentials.
    /// `naming`: this device's names beyond the defaults (`DeviceSettings.copyNaming`).
    public static func find(for vaultPath: String, on fileSystem: FileSystem, naming: Naming = .standard) -> [Copy] {
        guard let (directory, name) = try? DirectoryHandle.parent(of: vaultPath, on: fileSystem) else { return [] }
        return find(in: directory, forVaultNamed: name, naming: naming)
    }

    /// The conflict copies of the vault named `vaultName` in the open `directory`.
    public static func find(in directory: DirectoryHandle, forVaultNamed vaultName: String, naming: Naming = .standard) -> [Copy] {
        directory.names().compactMap { name in
            engine(ofName: name, forVaultNamed: vaultName, naming: naming).map { Copy(path: directory.pathOf(name), engine: $0) }
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
    public static func vaults(in directory: DirectoryHandle, naming: Naming = .standard) -> [FolderVault] {
        let names = directory.names().filter { $0.hasSuffix(".kdbx") }
        let copies = Set(names.flatMap { vault in names.filter { engine(ofName: $0, forVaultNamed: vault, naming: naming) != nil } })
        return names.filter { !copies.contains($0) }.map { name in
            let isRegular = directory.status(of: name)?.isRegularFile ?? false
            return FolderVault(path: directory.pathOf(name), isRegularFile: isRegular)
        }
    }

    /// Which engine named `name` as a conflict copy of the vault file `vaultName`, if any.
    public static func engine(ofName name: String, forVaultNamed vaultName: String, naming: Naming = .standard) -> Engine? {
        SyncEngine.engine(namingCopy: name, ofVaultNamed: vaultName, naming: naming)
    }
}

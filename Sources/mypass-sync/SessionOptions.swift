internal import Foundation
internal import KDBXFormat
internal import MyPassCore
internal import MyPassSync

/// Opening a vault as a `SyncSession` from the command line: credentials plus `--state-dir`.
enum SessionOptions {
    static let stateOption = OptionSpec.value(
        "--state-dir", valueName: "dir", help: "Where this device keeps its sync state (default $XDG_STATE_HOME/mypass-sync).")

    static let backupOption = OptionSpec.flag(
        "--backup", help: "Keep the replaced version as <vault>.bak (0600); {\"backups\": true} in ~/.config/mypass-sync/config.json always does.")

    static func state(_ arguments: ParsedArguments) -> SyncStateStore {
        SyncStateStore(directory: arguments.value("state-dir"))
    }

    /// The vault at `path`, opened with the options' credentials, its version recorded as the base.
    static func open(_ arguments: ParsedArguments, path: String, command: String) throws -> SyncSession {
        // Not a vault, or a KDF beyond the caps: say so before asking for a password.
        let header = try KDBXReader.header(of: FileReading.readAll(atPath: path))
        try header.kdf.check(against: Credentials.limits(arguments, command: command))
        let key = try Credentials.compositeKey(arguments, vaultPath: path, command: command)
        return try open(arguments, path: path, key: key, command: command)
    }

    /// The vault at `path` opened with `key` (for commands that use one key for several vaults).
    static func open(_ arguments: ParsedArguments, path: String, key: CompositeKey, command: String) throws -> SyncSession {
        let limits = try Credentials.limits(arguments, command: command)
        let session = try SyncSession(path: path, key: key, state: state(arguments), limits: limits)
        ProcessLifetime.keepUntilExit(session)  // its vault is never freed entry by entry: the process ends soon
        let settings = try DeviceSettings.load()
        session.keepsBackup = arguments.flag("backup") || settings.backups
        session.rotatesKDFSalt = settings.rotateKDFSalt
        session.keepInStep(QuickUnlock())
        return session
    }

    /// Saves an edit; a change another program made meanwhile is merged in, not written over. Returns
    /// whether the file was written (an edit that changes nothing leaves it byte for byte as it was).
    @discardableResult
    static func saveEdit(_ session: SyncSession, output: inout StandardStreams) throws -> Bool {
        let save = try session.saveMerging()
        if !save.mergedFromDisk.isEmpty {
            output.printError("note: the vault changed on disk meanwhile; merged \(save.mergedFromDisk.count) change(s) from it")
        }
        for warning in session.warnings { output.printError("warning: \(warning)") }
        return save.wroteFile
    }
}

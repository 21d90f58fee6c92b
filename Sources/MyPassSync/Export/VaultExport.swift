internal import SyncFiles
internal import SyncState
public import SyncCommit
internal import SyncWatch
internal import SyncRemote
internal import KDBXFormat

extension UnlockedVault {
    /// The decrypted vault as the JSON document of CLI.md (secrets included), handed to `emit` piece
    /// by piece as it is produced: never the whole document in memory.
    public func exportJSON(to emit: @escaping (String) -> Void) throws {
        try ExportStream(emit: emit).write(opened)
    }

    /// The same document as UTF-8 bytes, handed to `emit` piece by piece (no `String` made of them).
    public func exportJSON(bytes emit: @escaping (UnsafeRawBufferPointer) -> Void) throws {
        try ExportStream(emitBytes: emit).write(opened)
    }

    /// The decrypted vault as KeePass XML (secrets in plain text), handed to `emit` as produced.
    public func exportXML(to emit: @escaping (UnsafeRawBufferPointer) -> Void) throws {
        try KDBXWriter.writePlainXML(opened.vault, to: emit)
    }
}

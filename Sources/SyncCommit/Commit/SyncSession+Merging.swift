public import MyPassCore
internal import SyncState

/// An app's merge decisions on a session: each is one call of the one door, `MergeCommit.write`.
/// The session itself only saves by compare-and-swap, reloads and overwrites.
extension SyncSession {
    /// What `saveMerging` (or a merge through `MergeCommit.write`) did.
    public struct MergingSave: Sendable {
        /// Changes taken in from a version another program wrote meanwhile.
        public let mergedFromDisk: [Change]
        /// Whether the file was replaced (false: the content was already on disk).
        public let wroteFile: Bool
        /// How each property the snapshot and that version differed on was decided.
        public var decisions: [FieldDecision] = []
        /// What that merge noticed without stopping.
        public var warnings: [String] = []
        /// Whether a version written meanwhile was merged in.
        var mergedDiskVersion = false
    }

    /// Saves, merging in whatever another program wrote meanwhile (what the entry commands do); a
    /// merge that writes is journaled.
    @discardableResult
    public func saveMerging() throws -> MergingSave {
        try MergeCommit.write(.edits, through: self, journal: .resolve)
    }

    /// Applies `decision` to `conflict` (and to any newer change that arrives meanwhile, up to
    /// `maximumAttempts` times; then `SaveError.changedOnDisk`). `merge`: the working snapshot merged
    /// with the disk version and written through `MergeCommit.write`.
    public func resolve(_ conflict: Conflict, by decision: Decision) throws -> Resolution {
        switch decision {
        case .reload: return try reload(conflict)
        case .overwrite: return try overwrite(conflict)
        case .merge:
            let save = try MergeCommit.write(.editsOver(conflict), through: self, journal: .resolve)
            return Resolution(decision: .merge, changes: save.mergedFromDisk, warnings: save.warnings, backup: nil, wroteFile: save.wroteFile)
        }
    }

    /// Applies `decision` to the change on disk since this session's version; when there is none,
    /// `reload` keeps the disk version and the others write the working copy.
    public func resolveDiskChange(by decision: Decision) throws -> Resolution {
        if let conflict = try diskChange() { return try resolve(conflict, by: decision) }
        let wrote = try decision != .reload && saveMerging().wroteFile
        return Resolution(decision: decision, changes: [], warnings: ["the vault had not changed on disk"], backup: nil, wroteFile: wrote)
    }
}

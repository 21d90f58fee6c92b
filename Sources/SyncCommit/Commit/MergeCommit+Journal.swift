internal import Foundation
internal import SyncFiles
internal import SyncState
internal import KDBXFormat
internal import MyPassCore
internal import MyPassCrypto

extension MergeCommit {
    /// The one place a merge is journaled: `session` has just written a merge over `before` (the
    /// bytes its swap replaced); its file's bytes now are the "after". Best effort: a failure costs
    /// the record, not the merge (a warning on the session says so).
    static func journal(_ kind: MergeJournal.Kind, of session: SyncSession, before: Data, inputs: [MergeJournal.Input], changes: Int,
                        decisions: [FieldDecision]) {
        guard let after = session.fileBytes else { return }
        do {
            let sealed = try SealedExplanation.seal(decisions, before: SHA256.hexHash(before), after: SHA256.hexHash(after), by: session)
            try MergeJournal(state: session.state, vaultPath: session.path).append(kind: kind, before: before, after: after, sealedExplanation: sealed,
                                                                                   inputs: inputs, changes: changes, decisions: decisions)
        } catch {
            session.warnings.append("the merge was not recorded in the journal: \(error)")
        }
    }
}

/// A journaled explanation, sealed and opened.
enum SealedExplanation {
    /// The fields holding the SHA-256 of the vault file before and after the merge.
    static let beforeField = "mypass-sync before SHA-256"
    static let afterField = "mypass-sync after SHA-256"

    /// `decisions` as JSON in the protected notes of the only entry of a KDBX file written with the
    /// key and format of `session`'s vault (so it is exactly as well protected as the vault), with the
    /// SHA-256 of the files before and after the merge: what `undo` checks the record's files against,
    /// since only this device's key can write them there.
    static func seal(_ decisions: [FieldDecision], before: String, after: String, by session: SyncSession) throws -> Data {
        let json = String(decoding: try JSONEncoder().encode(decisions), as: UTF8.self)
        let now = Timestamp.now()
        let holder = Entry(uuid: UUID(), times: Times(allAt: now), fields: [
            EntryField(key: EntryField.notes, value: FieldValue(json, isProtected: true)),
            EntryField(key: beforeField, value: FieldValue(before, isProtected: false)),
            EntryField(key: afterField, value: FieldValue(after, isProtected: false)),
        ])
        let vault = session.vault
        let sealed = Vault(meta: vault.meta, root: Group(uuid: vault.root.uuid, name: "mypass-sync journal", times: Times(allAt: now), entries: [holder]))
        return try KDBXWriter.serialize(sealed, settings: session.settings, key: session.key, cachedKey: session.derivedKey, limits: session.limits).0
    }

    /// The SHA-256 of the files before and after the merge sealed in `bytes` (nil: a record written
    /// before they were sealed).
    static func journaledVersions(_ bytes: Data, key: CompositeKey, cachedKey: DerivedKey?, limits: ResourceLimits)
        throws -> (before: String, after: String)? {
        let entry = try KDBXReader.open(bytes, key: key, cachedKey: cachedKey, limits: limits).vault.root.entries.first
        guard let before = entry?.field(beforeField)?.text, let after = entry?.field(afterField)?.text else { return nil }
        return (before, after)
    }

    /// The decisions sealed in `bytes`, opened with the vault's key.
    static func open(_ bytes: Data, key: CompositeKey, cachedKey: DerivedKey?, limits: ResourceLimits) throws -> [FieldDecision] {
        let opened = try KDBXReader.open(bytes, key: key, cachedKey: cachedKey, limits: limits)
        guard let notes = opened.vault.root.entries.first?.field(EntryField.notes)?.text else { return [] }
        return try JSONDecoder().decode([FieldDecision].self, from: Data(notes.utf8))
    }
}

internal import Foundation
internal import SyncFiles
internal import SyncState
internal import KDBXFormat
internal import MyPassCore

extension SyncSession {
    /// Records in the vault's journal a merge this session has just written over `before` (the file's
    /// previous bytes). Best effort: a failure costs the record, not the merge (a warning says so).
    func journalMerge(_ kind: MergeJournal.Kind, before: Data, inputs: [MergeJournal.Input], changes: Int, decisions: [FieldDecision]) {
        guard let after = fileBytes else { return }
        do {
            try MergeJournal(state: state, vaultPath: path).append(kind: kind, before: before, after: after, sealedExplanation: try seal(decisions),
                                                                   inputs: inputs, changes: changes, decisions: decisions)
        } catch {
            warnings.append("the merge was not recorded in the journal: \(error)")
        }
    }

    /// `decisions` as JSON in the protected notes of the only entry of a KDBX file written with this
    /// vault's key and format (so it is exactly as well protected as the vault).
    private func seal(_ decisions: [FieldDecision]) throws -> Data {
        let json = String(decoding: try JSONEncoder().encode(decisions), as: UTF8.self)
        let now = Timestamp.now()
        let holder = Entry(uuid: UUID(), times: Times(allAt: now), fields: [EntryField(key: EntryField.notes, value: FieldValue(json, isProtected: true))])
        let sealed = Vault(meta: vault.meta, root: Group(uuid: vault.root.uuid, name: "mypass-sync journal", times: Times(allAt: now), entries: [holder]))
        return try KDBXWriter.serialize(sealed, settings: settings, key: key, cachedKey: derivedKey, limits: limits).0
    }
}

/// Opening a journaled explanation.
enum SealedExplanation {
    /// The decisions sealed in `bytes`, opened with the vault's key.
    static func open(_ bytes: Data, key: CompositeKey, cachedKey: DerivedKey?, limits: ResourceLimits) throws -> [FieldDecision] {
        let opened = try KDBXReader.open(bytes, key: key, cachedKey: cachedKey, limits: limits)
        guard let notes = opened.vault.root.entries.first?.field(EntryField.notes)?.text else { return [] }
        return try JSONDecoder().decode([FieldDecision].self, from: Data(notes.utf8))
    }
}

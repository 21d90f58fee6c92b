package import KDBXFormat
package import SyncState
internal import MyPassCore
internal import MyPassMerge

extension MergeCommit.Step {
    /// Records how an input's format was merged (MERGE.md rule 13): the decisions for `--explain`;
    /// a change naming the parts taken from the input, with the cipher and KDF written and why; when
    /// the vault's own format is kept against a different one, the same sentence as a warning (the
    /// file does not change, so a merge of the result again logs nothing).
    mutating func record(_ format: FormatMerge.Outcome, title: String) {
        decisions += format.decisions
        guard let note = format.note else { return }
        if format.changedParts.isEmpty {
            warnings.append("format: " + note)
        } else {
            changes.append(Change(.metaChanged, .meta, uuid: nil, path: "/", title: title, fields: format.changedParts, detail: note))
        }
    }
}

extension FormatMerge {
    /// Whether `a` and `b` write the same container version, cipher, KDF (salt aside) and compression.
    static func sameChoice(_ a: FormatSettings, _ b: FormatSettings?) -> Bool {
        guard let b else { return false }
        return a.version == b.version && sameParts(a, b)
    }
}

extension MergeCommit.Formats {
    /// The format of the version this device last synced of the vault at `vaultPath` (its file's
    /// header), the ancestor of the cipher and KDF; nil when there is none.
    package static func rememberedBase(in state: SyncStateStore, vaultPath: String) -> FormatSettings? {
        guard let bytes = state.base(for: vaultPath)?.bytes, let header = try? KDBXReader.header(of: bytes) else { return nil }
        return FormatSettings(header)
    }
}

extension Meta {
    /// Takes a format merge's `SettingsChanged` (a second after the later side's when it wrote a
    /// mix of both sides' parts), recording each setting's own time where it is earlier
    /// (`SettingTimes`): the settings the vault merge decided and the format's parts keep the times
    /// of the sides they came from, so a third device's change made in between still outranks them.
    mutating func stampSettings(_ format: FormatMerge.Outcome) {
        let times = SettingTimes.metaTimes(self).merging(format.partTimes) { _, part in part }
        settingsChanged = format.settingsChanged
        SettingTimes.write(times, into: &self)
    }
}

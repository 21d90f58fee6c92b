extension Entry {
    /// Makes the values this version has in common with `earlier` (another version of the same
    /// entry, typically the history item before it) use `earlier`'s storage: equal field names and
    /// values, tags, attachments, auto-type and custom data then exist once in memory, however many
    /// history items repeat them. The entry's content does not change (`==` holds before and after).
    ///
    /// A reader calls it for each version it decodes; an entry with five history items that mostly
    /// repeat the same title, user name, URL and notes then holds those strings once, not six times.
    public mutating func shareStorage(with earlier: Entry) {
        if fields != earlier.fields {
            for index in fields.indices {
                guard let match = earlier.fields.matchingIndex(forKey: fields[index].key, near: index) else { continue }
                let other = earlier.fields[match]
                fields[index] = EntryField(nameOf: other, value: fields[index].value == other.value ? other.value : fields[index].value)
            }
        }
        shareCollections(with: earlier)
    }

    /// The part of `shareStorage(with:)` above single fields: the field array when all fields are
    /// equal, the tags, attachments, auto-type and custom data. A reader that took each field's name
    /// and value from `earlier` as it decoded them calls this alone (the fields again were a twentieth
    /// of an open).
    package mutating func shareCollections(with earlier: Entry) {
        if fields == earlier.fields { fields = earlier.fields }
        shareIfEqual(&tags, earlier.tags)
        shareIfEqual(&attachments, earlier.attachments)
        shareDetails(with: earlier)
    }
}

private func shareIfEqual<Value: Equatable>(_ value: inout Value, _ earlier: Value) {
    if value == earlier { value = earlier }
}

extension [EntryField] {
    /// The index of the field named `key`, looked for first at `hint` (versions usually keep the order).
    fileprivate func matchingIndex(forKey key: String, near hint: Int) -> Int? {
        if hint < count, self[hint].key == key { return hint }
        return firstIndex { $0.key == key }
    }
}

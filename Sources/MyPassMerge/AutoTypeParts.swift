internal import MyPassCore

/// Auto-type merged in parts (MERGE.md rule 4): the enabled flag, the default sequence and each
/// window association, keyed by its window.
extension AutoType {
    /// The associations keyed by window; a window listed again is keyed `window#2`, `#3`...
    var keyedAssociations: [(key: String, association: Association)] {
        var seen: [String: Int] = [:]
        return associations.map { association in
            let count = (seen[association.window] ?? 0) + 1
            seen[association.window] = count
            return (count == 1 ? association.window : "\(association.window)#\(count)", association)
        }
    }

    /// The sequence typed into the window keyed `key` (nil: no such association).
    func sequence(forWindowKey key: String) -> String? {
        keyedAssociations.first { $0.key == key }?.association.keystrokeSequence
    }
}

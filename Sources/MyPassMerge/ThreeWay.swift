internal import MyPassCore

/// Three-way choice of one property between a local and a remote version of the same object.
struct ThreeWay<Object> {
    enum Pick { case local, remote, conflict }

    let ancestor: Object?
    let local: Object
    let remote: Object
    /// Whether each side may count as having edited (its version is not older than the ancestor).
    let localActive: Bool
    let remoteActive: Bool
    /// The rule named when both sides changed a property (entries: by each field's change time).
    var conflictRule: FieldDecision.Rule = .conflictNewerWins
    /// Each side's versions newer than the ancestor before its current one (an entry's history): a
    /// value back at the ancestor's after one of them held another was changed back (MERGE.md rule 14).
    var localEarlier: [Object] = []
    var remoteEarlier: [Object] = []
    /// Versions from the ancestor's time or before (the last items of the ancestor's and each side's
    /// history). A later version holding one of their values may come from a line that never saw the
    /// ancestor's change: the other side's version before a merge, kept in the merge's history.
    var priorVersions: [Object] = []

    /// Whether a side changed a property: its value differs from the ancestor's, or is the ancestor's
    /// again after a version since held another value, one no version up to the ancestor held (a
    /// value from before the ancestor says that version branched off earlier, not that it was changed).
    private func changed<T: Equatable>(_ value: (Object) -> T, _ current: T, base: T, earlier: [Object]) -> Bool {
        if current != base { return true }
        return earlier.contains { version in
            let held = value(version)
            return held != base && !priorVersions.contains { value($0) == held }
        }
    }

    /// Which side a property's value comes from: a value edited on one side only comes from that side;
    /// edited on both (differently) is a conflict; edited on neither keeps the ancestor's value.
    /// Without an ancestor, different values are a conflict.
    func pick<T: Equatable>(_ value: (Object) -> T) -> Pick {
        let l = value(local), r = value(remote)
        if l == r { return .local }
        guard let ancestor else { return .conflict }
        let b = value(ancestor)
        switch (localActive && changed(value, l, base: b, earlier: localEarlier),
                remoteActive && changed(value, r, base: b, earlier: remoteEarlier)) {
        case (true, true): return .conflict
        case (false, true): return .remote
        case (true, false): return .local
        case (false, false): return l == b ? .local : .remote
        }
    }

    /// The rule `pick` applies to a property (nil: the sides agree and neither changed it).
    func rule<T: Equatable>(_ value: (Object) -> T) -> FieldDecision.Rule? {
        let l = value(local), r = value(remote)
        guard let ancestor else { return l == r ? nil : .noAncestorNewerWins }
        let b = value(ancestor)
        if l == r { return l == b ? nil : .bothSameValue }
        switch (localActive && changed(value, l, base: b, earlier: localEarlier),
                remoteActive && changed(value, r, base: b, earlier: remoteEarlier)) {
        case (true, true): return conflictRule
        case (false, true): return .onlyRemoteChanged
        case (true, false): return .onlyLocalChanged
        case (false, false): return .staleVersionIgnored
        }
    }

    /// The decision on a property for an explanation (nil: the sides agree and neither changed it);
    /// `state` shows a value, `takesRemote` is what the merge did.
    func decision<T: Equatable>(_ name: String, _ value: (Object) -> T, state: (T) -> FieldState, takesRemote: Bool) -> PropertyDecision? {
        guard let rule = rule(value) else { return nil }
        return PropertyDecision(field: name, base: ancestor.map { state(value($0)) }, local: state(value(local)),
                                remote: state(value(remote)), result: takesRemote ? .remote : .local, rule: rule)
    }
}

/// How one property of one object was decided (the object's path and ancestor are added by the caller).
struct PropertyDecision {
    let field: String
    let base: FieldState?
    let local: FieldState
    let remote: FieldState
    let result: FieldDecision.Side
    var rule: FieldDecision.Rule
    /// When each side changed the property, where that decided (an entry field both changed).
    var localTime: Timestamp? = nil
    var remoteTime: Timestamp? = nil
}

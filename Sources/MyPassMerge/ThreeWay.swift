/// Three-way choice of one property between a local and a remote version of the same object.
struct ThreeWay<Object> {
    enum Pick { case local, remote, conflict }

    let ancestor: Object?
    let local: Object
    let remote: Object
    /// Whether each side may count as having edited (its version is not older than the ancestor).
    let localActive: Bool
    let remoteActive: Bool

    /// Which side a property's value comes from: a value edited on one side only comes from that side;
    /// edited on both (differently) is a conflict; edited on neither keeps the ancestor's value.
    /// Without an ancestor, different values are a conflict.
    func pick<T: Equatable>(_ value: (Object) -> T) -> Pick {
        let l = value(local), r = value(remote)
        if l == r { return .local }
        guard let ancestor else { return .conflict }
        let b = value(ancestor)
        switch (localActive && l != b, remoteActive && r != b) {
        case (true, true): return .conflict
        case (false, true): return .remote
        case (true, false): return .local
        case (false, false): return l == b ? .local : .remote
        }
    }
}

internal import Foundation

/// Which of two recycle bins a merge keeps (MERGE.md rules 9 and 11): the bin setting and the group
/// it names travel together, so the bin kept is the one the merged `RecycleBinUUID` names.
struct RecycleBinChoice: Equatable {
    /// The bin the result keeps.
    let keep: UUID
    /// The other side's bin, folded into `keep` (its contents moved, the group dropped with a tombstone).
    let drop: UUID

    /// The fold of two sides' different bins, or nil when there is nothing to fold: the same bin (or
    /// none) on a side, or the bin not kept is a group the kept bin's side holds as an ordinary group
    /// (that side pointed its bin elsewhere and kept the old group: moving the setting folds nothing).
    /// `named`: the bin the merged settings name; `mergeMade`: the bin a merge makes for entries kept
    /// from an unseen deletion, which gives way to a bin a client made (which of them exists depends
    /// on the order devices merge in, and every order must keep the same one).
    static func fold(localBin: UUID?, remoteBin: UUID?, named: UUID?, mergeMade: UUID,
                     localHolds: (UUID) -> Bool, remoteHolds: (UUID) -> Bool) -> RecycleBinChoice? {
        guard let localBin, let remoteBin, localBin != remoteBin else { return nil }
        if localBin == mergeMade || remoteBin == mergeMade {
            return localBin == mergeMade ? RecycleBinChoice(keep: remoteBin, drop: localBin) : RecycleBinChoice(keep: localBin, drop: remoteBin)
        }
        let keepLocal = named != remoteBin
        let choice = keepLocal ? RecycleBinChoice(keep: localBin, drop: remoteBin) : RecycleBinChoice(keep: remoteBin, drop: localBin)
        let keeperHoldsOther = keepLocal ? localHolds(remoteBin) : remoteHolds(localBin)
        return keeperHoldsOther ? nil : choice
    }
}

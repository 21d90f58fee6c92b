/// MyPassMerge holds the pure, deterministic three-way merge of vault snapshots
/// (`merge(base:local:remote:)`) and the diff that shares its change vocabulary. It does no I/O.
public enum MyPassMerge {
    /// Version of the change-log schema the merge reports in.
    public static let changeLogSchema = 1
}

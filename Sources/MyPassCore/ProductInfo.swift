/// Facts about this build of the MyPass engine that every layer may report.
public enum ProductInfo {
    /// The semantic version of the engine and of the `mypass-sync` tool.
    public static let version = "0.5.0"
}

/// KeePass auto-type settings of an entry.
public struct AutoType: Sendable, Hashable {
    public var isEnabled: Bool
    public var dataTransferObfuscation: Int
    public var defaultSequence: String
    public var associations: [Association]
    /// Unknown children of `<AutoType>`, kept.
    public var preserved: [PreservedXML]

    /// One window-title-to-sequence association.
    public struct Association: Sendable, Hashable {
        public var window: String
        public var keystrokeSequence: String
        public init(window: String, keystrokeSequence: String) {
            self.window = window
            self.keystrokeSequence = keystrokeSequence
        }
    }

    public init(
        isEnabled: Bool = true, dataTransferObfuscation: Int = 0, defaultSequence: String = "",
        associations: [Association] = [], preserved: [PreservedXML] = []
    ) {
        self.isEnabled = isEnabled
        self.dataTransferObfuscation = dataTransferObfuscation
        self.defaultSequence = defaultSequence
        self.associations = associations
        self.preserved = preserved
    }
}

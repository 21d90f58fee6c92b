/// KeePass auto-type settings of an entry.
public struct AutoType: Sendable, Hashable {
    /// Whether auto-type is on for the entry.
    public var isEnabled: Bool
    /// KeePass's obfuscation mode (0: none).
    public var dataTransferObfuscation: Int
    /// The keystroke sequence (empty: inherited).
    public var defaultSequence: String
    /// Windows and the sequences typed into them.
    public var associations: [Association]
    /// Unknown children of `<AutoType>`, kept.
    public var preserved: [PreservedXML]

    /// One window-title-to-sequence association.
    public struct Association: Sendable, Hashable {
        /// The window title pattern.
        public var window: String
        /// The sequence typed into it.
        public var keystrokeSequence: String
        /// An association of `window` and `keystrokeSequence`.
        public init(window: String, keystrokeSequence: String) {
            self.window = window
            self.keystrokeSequence = keystrokeSequence
        }
    }

    /// Auto-type settings with these values.
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

/// An XML element this model does not interpret (another client's data, a future field), kept
/// verbatim so that it survives open -> save.
public struct PreservedXML: Sendable, Hashable {
    public var name: String
    public var attributes: [Attribute]
    /// Character data directly inside the element (concatenated).
    public var text: String
    public var children: [PreservedXML]

    /// One attribute, in document order.
    public struct Attribute: Sendable, Hashable {
        public var name: String
        public var value: String
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    public init(name: String, attributes: [Attribute] = [], text: String = "", children: [PreservedXML] = []) {
        self.name = name
        self.attributes = attributes
        self.text = text
        self.children = children
    }
}

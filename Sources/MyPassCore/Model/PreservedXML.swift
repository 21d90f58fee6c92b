/// An XML element this model does not interpret (another client's data, a future field), kept
/// verbatim so that it survives open -> save.
public struct PreservedXML: Sendable, Hashable {
    /// The element's name.
    public var name: String
    /// Its attributes, in order.
    public var attributes: [Attribute]
    /// Character data directly inside the element (concatenated).
    public var text: String
    /// Its child elements, in order.
    public var children: [PreservedXML]

    /// One attribute, in document order.
    public struct Attribute: Sendable, Hashable {
        /// The attribute's name.
        public var name: String
        /// The attribute's value.
        public var value: String
        /// An attribute.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// An element with these parts.
    public init(name: String, attributes: [Attribute] = [], text: String = "", children: [PreservedXML] = []) {
        self.name = name
        self.attributes = attributes
        self.text = text
        self.children = children
    }
}

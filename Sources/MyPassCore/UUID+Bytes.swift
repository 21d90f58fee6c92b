public import Foundation

extension UUID {
    /// The UUID whose 16 bytes are `bytes` in order, or nil for any other length.
    public init?(bytes: Data) {
        guard bytes.count == 16 else { return nil }
        let b = [UInt8](bytes)
        self.init(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7],
                         b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
    }

    /// The 16 bytes of the UUID in order.
    public var data: Data {
        withUnsafeBytes(of: uuid) { Data($0) }
    }
}

extension UUID {
    /// Lowercase canonical `8-4-4-4-12` text, as the JSON outputs use.
    public var canonicalString: String { uuidString.lowercased() }
}

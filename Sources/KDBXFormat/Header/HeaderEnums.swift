internal import Foundation
internal import MyPassCore

/// The cipher that encrypts the payload.
public enum PayloadCipher: String, Sendable, CaseIterable {
    case aes256
    case chaCha20 = "chacha20"
    case twofish

    /// The cipher UUID stored in the header.
    var uuid: UUID {
        switch self {
        case .aes256: UUID(uuidString: "31C1F2E6-BF71-4350-BE58-05216AFC5AFF")!
        case .chaCha20: UUID(uuidString: "D6038A2B-8B6F-4CB5-A524-339A31DBB59A")!
        case .twofish: UUID(uuidString: "AD68F29F-576F-4BB9-A36A-D47AF965346C")!
        }
    }

    /// Length of the encryption IV (nonce) field.
    public var ivSize: Int { self == .chaCha20 ? 12 : 16 }

    init(uuid: UUID) throws(KDBXError) {
        guard let cipher = Self.allCases.first(where: { $0.uuid == uuid }) else {
            throw .unsupported("cipher \(uuid.uuidString.lowercased())")
        }
        self = cipher
    }
}

/// Compression of the payload.
public enum PayloadCompression: UInt32, Sendable {
    case none = 0
    case gzip = 1

    /// The name used by `info` and `export`.
    public var name: String { self == .gzip ? "gzip" : "none" }
}

/// The stream that masks protected values inside the XML document.
public enum InnerStreamAlgorithm: UInt32, Sendable {
    case none = 0
    case arcFourVariant = 1
    case salsa20 = 2
    case chaCha20 = 3
}

public import Foundation
public import MyPassCrypto

/// Turns a key file's bytes into its 32-byte key component, in every format KeePass accepts:
/// XML 1.0 (base64 `Data`), XML 2.0 (hex `Data` with a hash check), 32 raw bytes, 64 hex digits,
/// and any other file, hashed with SHA-256.
public enum KeyFile {
    /// The key component of the key file `contents`.
    public static func keyComponent(of contents: Data) throws(KDBXError) -> SecureBytes {
        if let xmlKey = try xmlKey(contents) { return xmlKey }
        if contents.count == 32 { return SecureBytes(contents) }
        if contents.count == 64, let decoded = hexDecoded(contents) { return decoded }
        return SHA256.secureHash(contents)
    }

    /// The key of an XML key file, nil when `contents` is not a KeePass XML key file at all.
    private static func xmlKey(_ contents: Data) throws(KDBXError) -> SecureBytes? {
        let trimmed = contents.drop { $0 == 0xEF || $0 == 0xBB || $0 == 0xBF || $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }
        guard trimmed.first == UInt8(ascii: "<") else { return nil }
        let reader = KeyFileXMLReader()
        do {
            try StrictXMLParser.parse(Data(contents), handler: reader)
        } catch {
            return nil  // Not well-formed XML: KeePass hashes such a file like any other.
        }
        guard reader.isKeyFile, let data = reader.data else { return nil }
        let version = reader.version ?? "1.0"
        let compact = data.filter { !$0.isWhitespace }
        if version.hasPrefix("2.") {
            guard let key = hexDecoded(Data(compact.utf8)) else {
                throw .invalidKeyFile("XML 2.0 key data is not hexadecimal")
            }
            if let expectedHash = reader.dataHash {
                let digest = key.withUnsafeBytes { SHA256.hash($0) }.prefix(4)
                let actual = digest.map { String(format: "%02X", $0) }.joined()
                guard actual == expectedHash.uppercased() else {
                    throw .invalidKeyFile("XML 2.0 key data does not match its hash")
                }
            }
            return key
        }
        guard version.hasPrefix("1."), let decoded = Data(base64Encoded: compact) else {
            throw .invalidKeyFile("unsupported XML key file version \(version)")
        }
        return decoded.count == 32 ? SecureBytes(decoded) : SHA256.secureHash(decoded)
    }

    /// `hex` decoded when it is only hexadecimal digits of even length.
    private static func hexDecoded(_ hex: Data) -> SecureBytes? {
        guard hex.count % 2 == 0 else { return nil }
        var bytes = SecureBytes(count: hex.count / 2)
        let valid = bytes.withUnsafeMutableBytes { output -> Bool in
            let digits = Array(hex)
            for index in 0..<output.count {
                guard let high = digitValue(digits[2 * index]), let low = digitValue(digits[2 * index + 1]) else {
                    return false
                }
                output[index] = high << 4 | low
            }
            return true
        }
        return valid ? bytes : nil
    }

    private static func digitValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// Collects `KeyFile/Meta/Version` and `KeyFile/Key/Data` (with its `Hash` attribute).
private final class KeyFileXMLReader: XMLEventHandler {
    private var path: [String] = []
    private var text = ""
    private(set) var isKeyFile = false
    private(set) var version: String?
    private(set) var data: String?
    private(set) var dataHash: String?

    func startElement(_ name: UnsafePointer<UInt8>, attributes: XMLAttributes) throws(KDBXError) {
        path.append(String(cString: name))
        text = ""
        if path == ["KeyFile"] { isKeyFile = true }
        if path == ["KeyFile", "Key", "Data"] {
            try attributes.forEach { attributeName, value throws(KDBXError) in
                if String(cString: attributeName) == "Hash" { dataHash = String(decoding: value, as: UTF8.self) }
            }
        }
    }

    func endElement() throws(KDBXError) {
        if path == ["KeyFile", "Meta", "Version"] { version = text.trimmingCharacters(in: .whitespacesAndNewlines) }
        if path == ["KeyFile", "Key", "Data"] { data = text }
        path.removeLast()
        text = ""
    }

    func characters(_ bytes: UnsafeBufferPointer<UInt8>) {
        text += String(decoding: bytes, as: UTF8.self)
    }
}

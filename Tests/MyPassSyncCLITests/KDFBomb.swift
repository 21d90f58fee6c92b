import Foundation
import MyPassCrypto
import Testing

/// A KDBX 4 file whose Argon2 memory and iterations are raised in the (unauthenticated) header to
/// 2 GiB x 10,000 (hours of derivation, within the caps for a vault the user opens), its header
/// SHA-256 recomputed, as whoever plants or serves such a file would.
enum KDFBomb {
    static func made(from file: Data) throws -> Data {
        try made(from: file, memory: 2 << 30, iterations: 10_000)
    }

    /// The file with its Argon2 memory and iterations set to these.
    static func made(from file: Data, memory: UInt64, iterations: UInt64) throws -> Data {
        var bytes = [UInt8](file)
        for (name, value) in [(UInt8(ascii: "M"), memory), (UInt8(ascii: "I"), iterations)] {
            let marker: [UInt8] = [0x05, 0x01, 0, 0, 0, name, 0x08, 0, 0, 0]
            let at = try #require((0..<(bytes.count - marker.count)).first { Array(bytes[$0..<$0 + marker.count]) == marker })
            withUnsafeBytes(of: value.littleEndian) { bytes.replaceSubrange(at + marker.count..<at + marker.count + 8, with: $0) }
        }
        let end: [UInt8] = [0x00, 0x04, 0, 0, 0, 0x0D, 0x0A, 0x0D, 0x0A]
        let headerEnd = try #require((0..<(bytes.count - end.count)).first { Array(bytes[$0..<$0 + end.count]) == end }) + end.count
        bytes.replaceSubrange(headerEnd..<headerEnd + 32, with: [UInt8](SHA256.hash(Data(bytes[0..<headerEnd]))))
        return Data(bytes)
    }
}

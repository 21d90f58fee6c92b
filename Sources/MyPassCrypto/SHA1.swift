public import Foundation
internal import CGcrypt

/// SHA-1, from libgcrypt: only to look passwords up in lists of leaked-password hashes (HIBP's lists
/// are SHA-1), never for integrity.
public enum SHA1 {
    /// Digest length in bytes.
    public static let byteCount = 20

    /// The digest of `message`.
    public static func hash(_ message: some ContiguousBytes) -> Data {
        var digest = GcryptDigest(algorithm: Int32(GCRY_MD_SHA1.rawValue))
        message.withUnsafeBytes { digest.update($0) }
        var output = Data(count: byteCount)
        output.withUnsafeMutableBytes { digest.finish(into: $0) }
        return output
    }
}
